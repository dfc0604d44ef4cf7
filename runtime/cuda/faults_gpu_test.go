package cuda

// GPU tests of the failure paths, driven by ORC_FAULT (faults.go). They run
// with the other GPU tests (ORC_GPU_TESTS=1):
//
//	ORC_GPU_TESTS=1 .gpu/rt/cuda.test -test.v -test.run GPUFault

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

// faultToy has 256 MiB of weights, so that a leaked arena shows plainly
// against the 64 MiB that other processes may move free memory by.
var faultToy = toy{vocab: 1000, dim: 32, maxTokens: 8, ctx: 64, padBytes: 256 << 20}

// vramLeakTolerance is how far free memory may move between two readings
// without counting as a leak.
const vramLeakTolerance = 64 << 20

// toyLife opens the toy plan in dir, runs a sequence through a prefill and
// two decode steps (graph capture, then replay) and closes everything. On
// the first failure of a sequence it closes it and runs the steps again on a
// new sequence, checking the logits: the device must recover from a failed
// step or allocation. It returns the first failure, and the device (closed)
// when Open succeeded.
func toyLife(t *testing.T, c toy, dir string) (*Device, error) {
	t.Helper()
	p, err := plans.Open(dir, plans.OpenOptions{SkipWeightHash: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(p, 0, Options{})
	if err != nil {
		p.Close() // a failed Open leaves the plan to the caller
		return nil, err
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close after a fault: %v", err)
		}
	}()
	steps := func() error {
		seq, err := d.NewSequence(0)
		if err != nil {
			return err
		}
		defer seq.Close()
		var hist []int32
		for _, tokens := range [][]int32{{5, 6, 7}, {8}, {9}} {
			hist = append(hist, tokens...)
			logits, err := seq.Forward(context.Background(), tokens)
			if err != nil {
				return err
			}
			if e := relativeError(logits, c.logits(hist)); !(e < 1e-5) {
				t.Fatalf("logits after %d tokens: relative error %g", len(hist), e)
			}
		}
		return nil
	}
	first := steps()
	if first != nil {
		if err := steps(); err != nil {
			t.Fatalf("after the failure %v, a new sequence failed too: %v", first, err)
		}
	}
	return d, first
}

func relativeError(got []float32, want []float64) float64 {
	var num, den float64
	for i := range want {
		num += (float64(got[i]) - want[i]) * (float64(got[i]) - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

// checkVRAM fails when free memory has not come back to free0.
func checkVRAM(t *testing.T, g *gpu, free0 int64, what string) {
	t.Helper()
	if d := free0 - freeMem(t, g); d > vramLeakTolerance {
		t.Errorf("%s: free VRAM is %d bytes below its baseline", what, d)
	}
}

// countFaultPoints runs a whole life with a fault that never fires and
// returns how many allocations and launch calls it made.
func countFaultPoints(t *testing.T, dir string) (allocs, launches int64) {
	t.Helper()
	t.Setenv(faultEnv, "alloc:1000000,launch:1000000")
	d, err := toyLife(t, faultToy, dir)
	if err != nil {
		t.Fatal(err)
	}
	return d.g.faults.allocs.Load(), d.g.faults.launches.Load()
}

func TestGPUFaultAllocation(t *testing.T) {
	g := testGPU(t) // holds the context, so free memory readings compare
	dir := faultToy.write(t).Dir
	total, _ := countFaultPoints(t, dir)
	if total < 4 {
		t.Fatalf("a toy life made %d allocations; Open alone makes at least 4", total)
	}
	for n := int64(1); n <= total; n++ {
		t.Setenv(faultEnv, fmt.Sprintf("alloc:%d", n))
		free0 := freeMem(t, g)
		start := time.Now()
		d, err := toyLife(t, faultToy, dir)
		want := fmt.Sprintf("injected failure of allocation %d ", n)
		if !errors.Is(err, runtime.ErrOutOfMemory) || !strings.Contains(err.Error(), want) {
			t.Fatalf("allocation %d of %d failing: want ErrOutOfMemory saying %q, got %v", n, total, want, err)
		}
		where := "in Open"
		if d != nil {
			where = "after Open, the next sequence recovered"
			if d.kvBytes != 0 {
				t.Errorf("allocation %d: %d KV cache bytes still counted after Close", n, d.kvBytes)
			}
		}
		checkVRAM(t, g, free0, fmt.Sprintf("allocation %d failing", n))
		t.Logf("allocation %d of %d failed %s, in %v: %v", n, total, where, time.Since(start).Round(time.Millisecond), err)
	}
}

func TestGPUFaultLaunch(t *testing.T) {
	g := testGPU(t)
	dir := faultToy.write(t).Dir
	_, total := countFaultPoints(t, dir)
	// A prefill batch, the capture of the decode graph, two replays.
	if total < 3 {
		t.Fatalf("a toy life made %d launch calls, want a prefill, a capture and replays", total)
	}
	for n := int64(1); n <= total; n++ {
		t.Setenv(faultEnv, fmt.Sprintf("launch:%d", n))
		free0 := freeMem(t, g)
		_, err := toyLife(t, faultToy, dir)
		want := fmt.Sprintf("injected failure of launch call %d ", n)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("launch call %d failing: want an error saying %q, got %v", n, want, err)
		}
		checkVRAM(t, g, free0, fmt.Sprintf("launch call %d failing", n))
		t.Logf("launch call %d of %d failed, the next sequence recovered: %v", n, total, err)
	}
}

// faultChildPlan tells the test binary, run again as a child process, to
// load this plan under ORC_FAULT=load-kill and be killed.
const faultChildPlan = "ORC_FAULT_CHILD_PLAN"

func TestGPUFaultKillDuringLoad(t *testing.T) {
	g := testGPU(t)
	dir := faultToy.write(t).Dir
	free0 := freeMem(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGPUFaultKillDuringLoadChild$", "-test.v")
	cmd.Env = append(os.Environ(), faultEnv+"=load-kill:50", faultChildPlan+"="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if ctx.Err() != nil {
		t.Fatalf("the child did not die within 2 minutes:\n%s", out)
	}
	if !errors.As(err, &exit) || !exit.Sys().(syscall.WaitStatus).Signaled() || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("want the child killed by SIGKILL during load, got %v:\n%s", err, out)
	}
	if !strings.Contains(string(out), "load progress 50") || strings.Contains(string(out), "load progress 75") || strings.Contains(string(out), "Open returned") {
		t.Fatalf("the child was not killed at 50 %% of the upload:\n%s", out)
	}
	// The driver frees a dead process's memory shortly after it exits.
	deadline := time.Now().Add(10 * time.Second)
	for free0-freeMem(t, g) > vramLeakTolerance && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	checkVRAM(t, g, free0, "a process killed during load")
	// The GPU serves the next process's load.
	if _, err := toyLife(t, faultToy, dir); err != nil {
		t.Fatalf("loading after the killed process: %v", err)
	}
	t.Logf("child killed during load as asked; free VRAM back within %d MiB of %d bytes", vramLeakTolerance>>20, free0)
}

// TestGPUFaultKillDuringLoadChild is the child of TestGPUFaultKillDuringLoad.
func TestGPUFaultKillDuringLoadChild(t *testing.T) {
	dir := os.Getenv(faultChildPlan)
	if dir == "" || !gpuTests() {
		t.Skip("run by TestGPUFaultKillDuringLoad")
	}
	p, err := plans.Open(dir, plans.OpenOptions{SkipWeightHash: true})
	if err != nil {
		t.Fatal(err)
	}
	// Half of the 256 MiB upload is on the GPU when the kill lands.
	d, err := Open(p, 0, Options{ChunkBytes: 4 << 20, Progress: func(pct int) { fmt.Fprintf(os.Stderr, "load progress %d\n", pct) }})
	fmt.Fprintf(os.Stderr, "Open returned %v\n", err)
	if err == nil {
		d.Close()
	}
}

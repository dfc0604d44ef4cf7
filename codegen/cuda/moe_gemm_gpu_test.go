package cuda_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llama-orch/orc/plans"
	rcuda "github.com/llama-orch/orc/runtime/cuda"
)

// moeGEMMMaxTokens is the steps the MoE GEMM timing's plans take: a MoE
// plan's default prefill step.
const moeGEMMMaxTokens = 2048

// TestGPUMoEGEMMs checks the prefill's expert GEMMs at gpt-oss-20b's
// (MXFP4, 128-slot tiles) and Qwen3-30B-A3B's (Q4_K and Q6_K, 64-slot
// tiles) real widths against the float64 reference, every row of steps of
// 1, 77 and 512 tokens in a plan of 512-token steps: at 512 an expert's
// slots fill several tiles (gpt-oss: 64 an expert on average), each step
// after a full step of other tokens (checkSteps). The bound is the prefill's
// (moePrefillTolerance: x and h in f16).
func TestGPUMoEGEMMs(t *testing.T) {
	gpuOnly(t)
	for _, s := range moeTokShapes {
		t.Run(s.name, func(t *testing.T) {
			h := newMoETokHarness(t, s)
			const maxTokens = 512
			g, man, y0 := moeTokGraphSteps(t, s, 1, maxTokens, "")
			dev := openEditedPlan(t, g, man, 4096, h.data, func(k *plans.Kernels) {
				k.Decode = k.Prefill // T = 1 runs the GEMMs too
				k.Logits = y0
			})
			h.checkSteps(t, dev, maxTokens, []int{1, 77, maxTokens}, moePrefillTolerance)
		})
	}
}

// TestGPUMoEGEMMSpeed times the prefill's expert GEMMs (moe_gate_up_gemm,
// moe_down_gemm) of one MoE block at gpt-oss-20b's and Qwen3-30B-A3B's real
// widths (moeTokShapes) in steps of 512 and 2,048 tokens of a plan of
// 2,048-token steps, each launch alone between two events (the device's
// launch profile, Options.ProfileFile), and logs each kernel's µs a launch
// and TFLOP/s: 2·T·K·rows·cols over its time (rows 2F for gate and up).
// No speed is asserted.
func TestGPUMoEGEMMSpeed(t *testing.T) {
	gpuOnly(t)
	if os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("timing: set ORC_GPU=1 ORC_GPU_BENCH=1")
	}
	for _, s := range moeTokShapes {
		h := newMoETokHarness(t, s)
		g, man, y0 := moeTokGraphSteps(t, s, 1, moeGEMMMaxTokens, "")
		dir := writeEditedPlan(t, g, man, h.data, func(k *plans.Kernels) { k.Logits = y0 })
		for _, T := range []int{512, 2048} {
			path := filepath.Join(t.TempDir(), "profile.txt")
			dev := openPlanDir(t, dir, rcuda.Options{Ctx: 4096, ProfileFile: path})
			for i := range 10 {
				seq, err := dev.NewSequence(T)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := seq.Forward(context.Background(), moeTokTokens(T, i)); err != nil {
					t.Fatal(err)
				}
				seq.Close()
			}
			if err := dev.Close(); err != nil { // writes the profile
				t.Fatal(err)
			}
			us := prefillLaunchMicros(t, path)
			slots := float64(T * s.k)
			for _, k := range []struct {
				fn         string
				rows, cols int
			}{{"moe_gate_up_gemm", 2 * s.f, s.d}, {"moe_down_gemm", s.d, s.f}} {
				u, ok := us[k.fn]
				if !ok {
					t.Fatalf("%s T=%d: the profile has no %s", s.name, T, k.fn)
				}
				t.Logf("%s T=%4d %-16s %8.1f µs %6.1f TFLOP/s", s.name, T, k.fn, u, 2*slots*float64(k.rows*k.cols)/u/1e6)
			}
		}
	}
}

// prefillLaunchMicros gives a launch profile's prefill µs a launch by
// kernel function, its name up to the config's "_Moe".
func prefillLaunchMicros(t *testing.T, path string) map[string]float64 {
	t.Helper()
	us := map[string]float64{}
	for k, each := range launchMicros(t, path)["prefill"] {
		fn, _, _ := strings.Cut(k, "_Moe")
		us[fn] = each
	}
	return us
}

package cuda

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
)

// gpuTests says whether this run is on a GPU host (ORC_GPU_TESTS=1).
func gpuTests() bool { return os.Getenv("ORC_GPU_TESTS") == "1" }

func TestOpenWithoutDriver(t *testing.T) {
	if gpuTests() {
		t.Skip("ORC_GPU_TESTS=1: a driver is expected here")
	}
	p := toy{vocab: 50, dim: 8, maxTokens: 4, ctx: 32}.write(t)
	d, err := Open(p, 0, Options{})
	if err == nil {
		d.Close()
		t.Fatal("Open succeeded on a machine expected to have no CUDA driver (set ORC_GPU_TESTS=1 on GPU hosts)")
	}
	if !errors.Is(err, runtime.ErrNoDriver) || !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Fatalf("want an error wrapping ErrNoDriver that names libcuda.so.1, got %v", err)
	}
}

func TestCheckPlanRefuses(t *testing.T) {
	c := toy{vocab: 50, dim: 8, maxTokens: 4, ctx: 32}
	for want, edit := range map[string]func(m *plans.Manifest, o *Options){
		"has no GPU kernels":           func(m *plans.Manifest, o *Options) { m.Kernels = nil },
		"is not open: 0 of 9 weight":   func(m *plans.Manifest, o *Options) { m.Memory.WeightBytes = 9 },
		"context 33 is outside 1..32":  func(m *plans.Manifest, o *Options) { o.Ctx = 33 },
		"chunk size -1":                func(m *plans.Manifest, o *Options) { o.ChunkBytes = -1 },
		"max_tokens 0":                 func(m *plans.Manifest, o *Options) { m.Memory.MaxTokens = 0 },
		"no prefill schedule":          func(m *plans.Manifest, o *Options) { m.Kernels.Prefill = nil },
		"state field positions":        func(m *plans.Manifest, o *Options) { m.Kernels.State.Bytes -= 4 },
		"state field greedy at 20":     func(m *plans.Manifest, o *Options) { m.Kernels.State.Greedy = 20 },
		"state field greedy at 48":     func(m *plans.Manifest, o *Options) { m.Kernels.State.Greedy = 48 },
		"logits [":                     func(m *plans.Manifest, o *Options) { m.Kernels.Logits = m.Memory.ArenaBytes },
		"prefill launch 0 (toy_store)": func(m *plans.Manifest, o *Options) { m.Kernels.Prefill[0].Block[0] = 2000 },
	} {
		m := c.manifest()
		var o Options
		edit(m, &o)
		err := checkPlan(&plans.Plan{Dir: "toy", Manifest: *m}, o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error containing %q, got %v", want, err)
		}
	}
	if err := checkPlan(&plans.Plan{Dir: "toy", Manifest: *c.manifest()}, Options{}); err != nil {
		t.Fatalf("the toy plan is valid: %v", err)
	}
}

func TestWriteState(t *testing.T) {
	st := toy{vocab: 50, dim: 8, maxTokens: 4, ctx: 32}.manifest().Kernels.State
	st.Greedy, st.Sample, st.Bytes = st.Bytes, st.Bytes+32, st.Bytes+32+plans.SampleStepBytes
	b := make([]byte, st.Bytes)
	for i := range b {
		b[i] = 0xFF // a reused pinned image: the last step's picks are still there
	}
	draw := sample.New(sample.Params{Temperature: 0.5, TopK: 3, RepetitionPenalty: 1.2, Seed: 9}).Step([]int32{4, 4, 2}, 7, 50)
	le := binary.LittleEndian
	// The head-keyed word (11) says whether the step's head left its picks.
	writeState(b, &st, []int32{7}, 5, 32, &draw, true)
	if w := le.Uint32(b[st.Sample+44:]); w != 1 {
		t.Fatalf("a decode step's head-keyed word %#x, want 1", w)
	}
	writeState(b, &st, []int32{7, 9}, 5, 32, &draw, false)
	if w := le.Uint32(b[st.Sample+44:]); w != 0 {
		t.Fatalf("a prefill step's head-keyed word %#x, want 0", w)
	}
	if key, bad, drawn := le.Uint64(b[st.Greedy:]), le.Uint32(b[st.Greedy+8:]), le.Uint64(b[st.Greedy+16:]); key != 0 || bad != 0 || drawn != 0 {
		t.Fatalf("picks %#x, %#x, %#x after writeState, want them zeroed", key, bad, drawn)
	}
	s := b[st.Sample:]
	if math.Float32frombits(le.Uint32(s)) != 0.5 || le.Uint32(s[4:]) != 3 || math.Float32frombits(le.Uint32(s[16:])) != 1.2 ||
		le.Uint32(s[28:]) != 2 || le.Uint64(s[32:]) != draw.Key || le.Uint32(s[40:]) != 0 ||
		le.Uint32(s[48:]) != 2 || le.Uint32(s[52:]) != 4 || le.Uint32(s[48+4*plans.SampleRecent:]) != 1 || le.Uint32(s[52+4*plans.SampleRecent:]) != 2 {
		t.Fatalf("draw settings %v", s[:56])
	}
	got := []uint32{le.Uint32(b[st.T:]), le.Uint32(b[st.Pos0:]), le.Uint32(b[st.Ctx:]),
		le.Uint32(b[st.Tokens:]), le.Uint32(b[st.Tokens+4:]), le.Uint32(b[st.Positions:]), le.Uint32(b[st.Positions+4:])}
	want := []uint32{2, 5, 32, 7, 9, 5, 6}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("state fields %v, want %v", got, want)
		}
	}
}

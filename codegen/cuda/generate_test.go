package cuda_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/ir"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// modelPart starts the model-specific part of an emitted source
// (templates/wrappers.cu.tmpl).
const modelPart = "\n// ---- this model's constants ----"

// TestGoldens compares the emitted source and schedules of every tiny preset
// with testdata/<preset>-<quant>.{cu,schedule.json}.
func TestGoldens(t *testing.T) {
	for _, tp := range tinyPresets {
		name := tp.preset + "-" + string(tp.quant)
		t.Run(name, func(t *testing.T) {
			out, _ := tinyOutput(t, tp.preset, tp.quant)
			// The template families are the same for every model: one
			// golden; each model's constants and kernels: its own.
			i := strings.Index(out.Source, modelPart)
			if i < 0 {
				t.Fatalf("source lacks %q", modelPart)
			}
			golden(t, "families.cu", []byte(out.Source[:i]))
			golden(t, name+".cu", []byte(out.Source[i:]))
			golden(t, name+".schedule.json", scheduleJSON(t, out))
		})
	}
}

// scheduleJSON is an output's schedules as their goldens hold them.
func scheduleJSON(t *testing.T, out *cuda.Output) []byte {
	t.Helper()
	sched, err := json.MarshalIndent(out.Kernels, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(sched, '\n')
}

func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./codegen/cuda/ -update)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test ./codegen/cuda/ -update and review the diff)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: %d lines, golden %d", path, len(gl), len(wl))
	}
}

// modelGolden compares the model's part of an emitted source (from
// modelPart on) with testdata/file.
func modelGolden(t *testing.T, file, source string) {
	t.Helper()
	i := strings.Index(source, modelPart)
	if i < 0 {
		t.Fatalf("source lacks %q", modelPart)
	}
	golden(t, file, []byte(source[i:]))
}

// compiles compiles an emitted source with nvcc for sm_80 and sm_90, each
// to a non-empty fatbin; without nvcc it skips the test.
func compiles(t *testing.T, source string) {
	t.Helper()
	if _, err := cuda.FindNVCC(); err != nil {
		t.Skipf("no nvcc, so the emitted CUDA cannot be compiled here: %v", err)
	}
	for _, arch := range []string{"sm_80", "sm_90"} {
		fb, err := cuda.Compile(source, arch)
		if err != nil {
			t.Fatal(err)
		}
		if len(fb) == 0 {
			t.Fatalf("%s: empty fatbin", arch)
		}
	}
}

// TestCompileTiny compiles every tiny preset's source with nvcc for sm_80
// and sm_90.
func TestCompileTiny(t *testing.T) {
	if _, err := cuda.FindNVCC(); err != nil {
		t.Skipf("no nvcc, so the emitted CUDA cannot be compiled here: %v", err)
	}
	for _, tp := range tinyPresets {
		t.Run(tp.preset+"-"+string(tp.quant), func(t *testing.T) {
			t.Parallel() // nvcc is single-threaded: one per core
			out, _ := tinyOutput(t, tp.preset, tp.quant)
			compiles(t, out.Source)
		})
	}
}

// TestTargets: a plan follows its target's description (passes.GPUTarget):
// sm_90 kernels overlap the grid before them (dependent launch), sm_80's,
// which have no grid_dep_wait, must not, so their plan says so and has no
// launch-at-end variants (Phi-3-mini's tensor-core SwiGLU starts late on
// sm_90); an architecture with no description is refused.
func TestTargets(t *testing.T) {
	path := writeShapes(t, "phi-3-mini-4k", 1, synth.QuantQ4KM)
	for _, c := range []struct {
		arch    string
		overlap bool
	}{{"sm_90", true}, {"sm_80", false}} {
		g, man, _ := lowerFor(t, path, fullWidthMaxTokens, c.arch)
		out := generate(t, g, man, c.arch)
		if out.Kernels.Arch != c.arch || out.Kernels.GridDepWait != c.overlap {
			t.Errorf("%s: plan for %s with GridDepWait %v, want %v", c.arch, out.Kernels.Arch, out.Kernels.GridDepWait, c.overlap)
		}
		atEnd := false
		for _, l := range out.Kernels.Decode {
			atEnd = atEnd || strings.HasSuffix(l.Kernel, "_at_end")
		}
		if atEnd != c.overlap {
			t.Errorf("%s: launch-at-end kernels in the decode schedule %v, want %v", c.arch, atEnd, c.overlap)
		}
	}
	g, man, _ := lowerFor(t, path, fullWidthMaxTokens, "sm_90")
	if _, err := cuda.Generate(g, man, cuda.Options{Arch: "sm_75"}); err == nil || !strings.Contains(err.Error(), `unknown CUDA target "sm_75"`) {
		t.Errorf("sm_75: %v, want an unknown-target error", err)
	}
	if _, err := cuda.Generate(g, man, cuda.Options{Arch: "sm_80"}); err == nil || !strings.Contains(err.Error(), `kernels were chosen for sm_90, not sm_80`) {
		t.Errorf("an sm_90 graph for sm_80: %v, want an error", err)
	}
}

// TestCodegenPrintsRecordedKernels: codegen emits the kernel family the
// chooseKernels pass recorded on each node, and reads a residual before
// its wait where the chooseEarlyResiduals pass recorded it, not where it
// would choose: Phi-3-mini's qkv takes qkv_mma as recorded, qkv_q8 where
// the record says q8, and a node without a record is refused; its o-proj
// reads the embedding before its wait as recorded, after it without the
// record, and a record its schedule cannot prove is refused.
func TestCodegenPrintsRecordedKernels(t *testing.T) {
	g, man, _ := lowerGPU(t, writeShapes(t, "phi-3-mini-4k", 1, synth.QuantQ4KM), fullWidthMaxTokens)
	var qkv, oproj *ir.Node
	for _, n := range g.Nodes {
		if n.Op == ir.OpQKV {
			qkv = n
		}
		if n.Bool("residual_before_wait") {
			oproj = n
		}
	}
	if qkv == nil || qkv.Str("kernel") != ir.KernelMMA || oproj == nil {
		t.Fatalf("Phi-3-mini's qkv: %v, want kernel mma; o-proj reading its residual before its wait: %v", qkv, oproj)
	}
	// linear_q8's RES (targs.go's resRead): 1 after the wait, 2 before.
	res := func(out *cuda.Output) string {
		for _, l := range out.Kernels.Decode {
			const oprojQ8 = "linear_q8_W_q4_k_dot_36864_B_none_3072_3072_64_false_false_"
			if strings.HasPrefix(l.Kernel, oprojQ8) {
				return strings.SplitN(strings.TrimPrefix(l.Kernel, oprojQ8), "_", 2)[0]
			}
		}
		return "none"
	}
	out := generate(t, g, man, "")
	if !launches(out.Kernels.Decode, "qkv_mma") {
		t.Errorf("recorded mma: no qkv_mma launch")
	}
	if got := res(out); got != "2" {
		t.Errorf("recorded residual_before_wait: the o-proj's RES is %s, want 2", got)
	}
	delete(oproj.Attrs, "residual_before_wait")
	if got := res(generate(t, g, man, "")); got != "1" {
		t.Errorf("no residual_before_wait: the o-proj's RES is %s, want 1", got)
	}
	// Without the qkv's late start the embed launches at its start, and
	// the qkv_mma and the attention after it wait inside their kernels.
	oproj.Attrs["residual_before_wait"] = true
	dropLateStart(g, qkv)
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "records residual_before_wait, but the writer of its r may not have completed") {
		t.Errorf("an unprovable residual_before_wait: %v, want a refusal", err)
	}
	delete(oproj.Attrs, "residual_before_wait")
	qkv.Attrs["kernel"] = ir.KernelQ8
	for _, k := range []string{"mma_warps", "mma_upw", "stream_smem", "stream_blocks", "fold_norm"} {
		delete(qkv.Attrs, k)
	}
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	if out := generate(t, g, man, ""); !launches(out.Kernels.Decode, "qkv_q8") || launches(out.Kernels.Decode, "qkv_mma") {
		t.Errorf("recorded q8: the decode schedule does not take qkv_q8 alone")
	}
	delete(qkv.Attrs, "kernel")
	delete(qkv.Attrs, "prefill_kernel")
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "no kernel recorded for its prefill: run the chooseKernels pass") {
		t.Errorf("no record: %v, want an error", err)
	}
}

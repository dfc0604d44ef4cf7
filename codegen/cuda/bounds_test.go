package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
)

// TestStagedLinearsShareSMs: a decode linear that quantizes x itself (x an
// embedding's f32 output here: linear_q8(w, x, y, state)) counts on its
// grid being resident at once, so one with more blocks than SMs is emitted
// with the registers' bound that lets them share the SMs: Phi-3-mini's
// o-proj shape (3072 → 3072, 192 blocks; too few slabs a block for
// linear_mmas) two blocks an SM; Qwen2.5-0.5B's down (4864 → 896, fewer
// blocks than SMs) without a bound.
func TestStagedLinearsShareSMs(t *testing.T) {
	for _, c := range []struct {
		dt      ir.DType
		out, in int64
		bounds  string
	}{
		{ir.Q6_K, 3072, 3072, "256, 2"},
		{ir.Q4_K, 3072, 3072, "256, 2"},
		{ir.Q6_K, 896, 4864, "256"},
	} {
		gt, _ := gguf.TypeByName(c.dt.String())
		g, man := gemvGraph(t, c.dt, 1, c.out, c.in, c.out*gt.RowBytes(c.in))
		out, err := cuda.Generate(g, man, cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var staged []string
		for _, l := range out.Kernels.Decode {
			if strings.HasPrefix(l.Kernel, "linear_q8") && len(l.Args) == 4 {
				staged = append(staged, l.Kernel)
			}
		}
		if len(staged) != 1 {
			t.Fatalf("%s %d → %d: staged decode linears %v, want one", c.dt, c.in, c.out, staged)
		}
		if want := "__launch_bounds__(" + c.bounds + ") " + staged[0] + "("; !strings.Contains(out.Source, want) {
			t.Errorf("%s %d → %d: no %q in the source", c.dt, c.in, c.out, want)
		}
	}
}

// TestSamplerSpreadsOverSMs: the sampler gives a thread at most 4 ids
// (sampleIDs) until it has 64 blocks (sampleBlocks): Phi-3's 32,064 ids take
// 16 blocks, Qwen2.5's 151,936 all 64 at 5 ids a thread.
func TestSamplerSpreadsOverSMs(t *testing.T) {
	for _, c := range []struct {
		vocab int64
		grid  int
		call  string
	}{{32064, 16, "sample_draw<32064, 16, 4,"}, {151936, 64, "sample_draw<151936, 64, 5,"}} {
		g, man := gemvGraph(t, ir.F32, 1, c.vocab, 32, 4*32*c.vocab)
		out, err := cuda.Generate(g, man, cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s := out.Kernels.Sampler; s == nil || s.Draw.Grid != c.grid || !strings.Contains(out.Source, c.call) {
			t.Errorf("vocabulary %d: sampler %+v, want %d blocks and %s...>", c.vocab, s, c.grid, c.call)
		}
	}
}

// TestSamplerVocabularyBound: the GPU sampler holds a vocabulary in its
// blocks' registers; past its bound the plan has none (the runtime samples
// on the host) instead of CUDA that does not compile.
func TestSamplerVocabularyBound(t *testing.T) {
	for _, c := range []struct {
		vocab   int64
		sampler bool
	}{{151936, true}, {262144, true}, {524288, true}, {524289, false}, {3 << 20, false}} {
		g, man := gemvGraph(t, ir.F32, 1, c.vocab, 32, 4*32*c.vocab)
		out, err := cuda.Generate(g, man, cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Kernels.Sampler != nil; got != c.sampler || strings.Contains(out.Source, "sample_draw_") != c.sampler {
			t.Errorf("vocabulary %d: sampler %v (source has sample_draw_: %v), want %v", c.vocab, got, strings.Contains(out.Source, "sample_draw_"), c.sampler)
		}
	}
}

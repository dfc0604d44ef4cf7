package cpu

import (
	"context"
	"math"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/runtime"
)

// tinyPresets are the tiny presets with transformers goldens: every
// architecture's small form.
var tinyPresets = synth.WithCheck(synth.CheckGoldenF32)

// openTiny opens a tiny preset's synthetic model compiled with steps of at
// most maxTokens tokens.
func openTiny(t *testing.T, preset string, maxTokens int) *Device {
	t.Helper()
	return openTinyKV(t, preset, maxTokens, "")
}

// openTinyKV is openTiny with the KV cache format kv (compiler.Options.KVCache).
func openTinyKV(t *testing.T, preset string, maxTokens int, kv string) *Device {
	t.Helper()
	dev, err := Open(compiledPlanKV(t, synthModel(t, preset), maxTokens, kv), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dev
}

// lastLogits feeds tokens to a fresh sequence in steps of the given sizes
// and returns the last logits.
func lastLogits(t *testing.T, dev runtime.Device, tokens []int32, sizes ...int) []float32 {
	t.Helper()
	seq, err := dev.NewSequence(64)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	var logits []float32
	for _, n := range sizes {
		if logits, err = seq.Forward(context.Background(), tokens[:n]); err != nil {
			t.Fatal(err)
		}
		tokens = tokens[n:]
	}
	return append([]float32(nil), logits...)
}

// Every tiny preset runs end to end in its default quantisation (Q4_K_M mix
// or MXFP4 experts), and the KV cache is consistent: a 16-token sequence fed
// as one chunk of 8 plus 8 single decode steps, as chunks 8+8, or as 5+3+8
// ends with the same logits. Prefill and decode take different matmul paths
// (a decoded row reused for every token vs quant.Dot on the encoded row),
// so they agree to float32 rounding, not bit for bit: 1e-4 of the logits'
// range.
func TestTinyPresetsConsistent(t *testing.T) {
	for _, name := range tinyPresets {
		t.Run(name, func(t *testing.T) {
			dev := openTiny(t, name, 8)
			vocab := dev.Info().Vocab
			tokens := make([]int32, 16)
			for i := range tokens {
				tokens[i] = int32((17 + 7919*i) % vocab)
			}
			ref := lastLogits(t, dev, tokens, 8, 8)
			scale := 0.0
			for _, v := range ref {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("non-finite logit %v", v)
				}
				scale = max(scale, math.Abs(float64(v)))
			}
			if scale == 0 {
				t.Fatal("all logits are zero")
			}
			for _, sizes := range [][]int{{8, 1, 1, 1, 1, 1, 1, 1, 1}, {5, 3, 8}} {
				got := lastLogits(t, dev, tokens, sizes...)
				worst := 0.0
				for i := range ref {
					worst = max(worst, math.Abs(float64(got[i]-ref[i])))
				}
				t.Logf("steps %v: max |Δlogit| %.3g (scale %.3g)", sizes, worst, scale)
				if worst > 1e-4*scale {
					t.Errorf("steps %v: max |Δlogit| %.3g vs chunks 8+8 (scale %.3g)", sizes, worst, scale)
				}
			}
		})
	}
}

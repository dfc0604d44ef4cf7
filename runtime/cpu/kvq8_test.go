package cpu

import (
	"testing"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime/batching/batchtest"
)

// An 8-bit KV cache changes a sequence's logits by its rounding alone: a
// tiny model's last logits after a 40-token prompt differ from the fp16
// plan's (the cache is quantized), by little of their range.
func TestKVCacheQ8Logits(t *testing.T) {
	for _, preset := range []string{"qwen2.5-0.5b-tiny", "gpt-oss-20b-tiny"} {
		t.Run(preset, func(t *testing.T) {
			model := synthModel(t, preset)
			f16, err := Open(compiledPlanKV(t, model, 16, ""), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer f16.Close()
			q8, err := Open(compiledPlanKV(t, model, 16, plans.KVCacheQ8), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer q8.Close()
			if got := q8.plan.Manifest.Model.KVCache; got != plans.KVCacheQ8 {
				t.Fatalf("the q8 plan's model says kv_cache %q", got)
			}
			tokens := make([]int32, 40)
			for i := range tokens {
				tokens[i] = int32((i*37 + 5) % f16.Info().Vocab)
			}
			a := lastLogits(t, f16, tokens, 16, 16, 8)
			b := lastLogits(t, q8, tokens, 16, 16, 8)
			e := batchtest.Error(a, b)
			if e == 0 {
				t.Fatal("the q8 plan's logits equal the fp16 plan's: nothing was quantized")
			}
			if e > 2e-2 {
				t.Errorf("the q8 plan's logits differ from the fp16 plan's by %.3g of their range", e)
			}
			t.Logf("%s: q8 logits within %.2e of fp16's", preset, e)
		})
	}
}

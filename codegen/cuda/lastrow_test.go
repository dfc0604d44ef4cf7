package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/plans"
)

// TestDecodeHeadReadsFinalNorm: a decode step's one row is its last, so the
// LM head on the integer path reads the int16 form the final norm writes,
// with no last_row launch between them; a prefill keeps the launch (the
// last of T rows). A head that reads the f32 row (GPT-2's f16 head) keeps
// it in decode too, since the planner may put the logits over that row.
func TestDecodeHeadReadsFinalNorm(t *testing.T) {
	kernels := func(preset string, q synth.Quant) *plans.Kernels {
		out, _ := tinyOutput(t, preset, q)
		return out.Kernels
	}
	has := func(sched []plans.Launch, prefix string) bool {
		for _, l := range sched {
			if strings.HasPrefix(l.Kernel, prefix) {
				return true
			}
		}
		return false
	}
	k := kernels("qwen2.5-0.5b-tiny", synth.QuantQ4KM)
	if has(k.Decode, "last_row") || !has(k.Prefill, "last_row") {
		t.Fatalf("last_row in decode %v, in prefill %v: want only in prefill", has(k.Decode, "last_row"), has(k.Prefill, "last_row"))
	}
	n := len(k.Decode)
	norm, head := k.Decode[n-2], k.Decode[n-1]
	// rmsnorm_rows(x, r, w, y_sum, y, yq, ys); linear_q8(w, xq, xs, y, greedy, state)
	if !strings.HasPrefix(norm.Kernel, "rmsnorm_rows") || len(norm.Args) != 7 || !strings.HasPrefix(head.Kernel, "linear_q8") ||
		head.Args[1] != norm.Args[5] || head.Args[2] != norm.Args[6] {
		t.Fatalf("decode ends %s %v, %s %v: want the head reading the final norm's int16 output", norm.Kernel, norm.Args, head.Kernel, head.Args)
	}
	if k := kernels("gpt2-small-tiny", synth.QuantF16); !has(k.Decode, "last_row") {
		t.Error("gpt2 f16: no last_row in decode before a head that reads the f32 row")
	}
}

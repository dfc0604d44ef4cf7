package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/plans"
)

// greedyWriters lists the launches of sched that take the state block's
// greedy slot as an argument.
func greedyWriters(sched []plans.Launch, slot int64) []int {
	var at []int
	for i, l := range sched {
		for _, a := range l.Args {
			if a.Kind == plans.ArgState && a.Offset == slot {
				at = append(at, i)
			}
		}
	}
	return at
}

// TestHeadLeavesGreedy: where the LM head runs on the integer path, the
// state block has a greedy slot past its positions, and in each schedule
// exactly one launch writes it: the linear_q8 that writes the logits. A head
// on the float path leaves none, so the runtime samples as before.
func TestHeadLeavesGreedy(t *testing.T) {
	out, man := tinyOutput(t, "qwen2.5-0.5b-tiny", synth.QuantQ4KM)
	st := out.Kernels.State
	if !st.HeadPicks || st.Greedy < st.Positions+4*int64(man.Memory.MaxTokens) || st.Greedy%8 != 0 || st.Greedy+24 > st.Bytes {
		t.Fatalf("greedy slot at %d: want an 8-byte aligned slot past the positions (%d + %d tokens) inside the %d-byte block",
			st.Greedy, st.Positions, man.Memory.MaxTokens, st.Bytes)
	}
	for name, sched := range map[string][]plans.Launch{"prefill": out.Kernels.Prefill, "decode": out.Kernels.Decode} {
		at := greedyWriters(sched, st.Greedy)
		if len(at) != 1 {
			t.Fatalf("%s: launches %v take the greedy slot, want exactly the head", name, at)
		}
		head := sched[at[0]]
		// linear_q8(w, xq, xs, y, greedy, state)
		if !strings.HasPrefix(head.Kernel, "linear_q8") || len(head.Args) != 6 || head.Args[3].Offset != out.Kernels.Logits {
			t.Errorf("%s: launch %d %s with %v takes the greedy slot; want the linear_q8 writing the logits at %d",
				name, at[0], head.Kernel, head.Args, out.Kernels.Logits)
		}
	}

	out, _ = tinyOutput(t, "qwen2.5-0.5b-tiny", synth.QuantF32)
	if out.Kernels.State.HeadPicks {
		t.Errorf("f32 head (float path): the head leaves picks")
	}
}

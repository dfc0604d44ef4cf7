package ir

import "testing"

// TestVerifyPagedAttention: the verifier takes a whole batched-step
// geometry on an attention and refuses half of one, no stage or too many,
// no blocks, and the geometry on another op.
func TestVerifyPagedAttention(t *testing.T) {
	geometry := func(stages, blocks int64) map[string]any {
		return map[string]any{"paged_stages": stages, "paged_blocks": blocks}
	}
	checkVerifier(t, verifyPagedAttention, []verifierCase{
		{"none", OpAttention, map[string]any{}, ""},
		{"Phi-3-mini's", OpAttention, geometry(2, 1056), ""},
		{"half of one", OpAttention, map[string]any{"paged_stages": int64(2)}, "1 of"},
		{"no stage", OpAttention, geometry(0, 1056), "paged_stages 0"},
		{"nine stages", OpAttention, geometry(9, 1056), "paged_stages 9"},
		{"no blocks", OpAttention, geometry(2, 0), "paged_blocks 0"},
		{"on a linear", OpLinear, geometry(2, 1056), "on a linear"},
	})
}

package ir

import "testing"

// TestVerifyPagedAttention: the verifier takes a whole batched-step
// geometry on an attention and refuses half of one, no stage or too many,
// no split or too many, and the geometry on another op.
func TestVerifyPagedAttention(t *testing.T) {
	geometry := func(stages, splits int64) map[string]any {
		return map[string]any{"paged_stages": stages, "paged_splits": splits}
	}
	checkVerifier(t, verifyPagedAttention, []verifierCase{
		{"none", OpAttention, map[string]any{}, ""},
		{"Phi-3-mini's", OpAttention, geometry(2, 3), ""},
		{"half of one", OpAttention, map[string]any{"paged_stages": int64(2)}, "1 of"},
		{"no stage", OpAttention, geometry(0, 3), "paged_stages 0"},
		{"nine stages", OpAttention, geometry(9, 3), "paged_stages 9"},
		{"no split", OpAttention, geometry(2, 0), "paged_splits 0"},
		{"17 splits", OpAttention, geometry(2, 17), "paged_splits 17"},
		{"on a linear", OpLinear, geometry(2, 3), "on a linear"},
	})
}

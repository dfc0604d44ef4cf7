package ir

import "testing"

// TestVerifyDecodeAttention: the verifier takes a whole decode geometry
// within its limits on an attention and refuses a part of one, splits not
// in whole clusters, clusters past the portable size, no stage, chunks not
// in whole rounds, and the geometry on another op.
func TestVerifyDecodeAttention(t *testing.T) {
	geometry := func(splits, cluster, stages, keys int64) map[string]any {
		return map[string]any{"decode_splits": splits, "decode_cluster": cluster, "decode_stages": stages, "decode_min_keys": keys}
	}
	checkVerifier(t, verifyDecodeAttention, []verifierCase{
		{"none", OpAttention, map[string]any{}, ""},
		{"Qwen's", OpAttention, geometry(128, 8, 1, 128), ""},
		{"part of one", OpAttention, map[string]any{"decode_splits": int64(8)}, "1 of"},
		{"splits not in whole clusters", OpAttention, geometry(12, 8, 1, 128), "whole clusters"},
		{"clusters of 16", OpAttention, geometry(32, 16, 1, 128), "whole clusters"},
		{"too many splits", OpAttention, geometry(256, 8, 1, 128), "at most 128"},
		{"no stage", OpAttention, geometry(8, 1, 0, 128), "decode_stages 0"},
		{"chunks of 100 keys", OpAttention, geometry(8, 1, 1, 100), "whole rounds"},
		{"on a linear", OpLinear, geometry(8, 1, 1, 128), "on a linear"},
	})
}

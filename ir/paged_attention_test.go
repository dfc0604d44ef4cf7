package ir

import "testing"

// TestVerifyPagedAttention: the verifier takes a whole batched-step
// geometry on an attention and refuses part of one, no stage or too many,
// no split, too many or a count not a power of two, no least tiles a
// split, and the geometry on another op.
func TestVerifyPagedAttention(t *testing.T) {
	geometry := func(stages, splits, tiles int64) map[string]any {
		return map[string]any{"paged_stages": stages, "paged_splits": splits, "paged_split_tiles": tiles}
	}
	checkVerifier(t, verifyPagedAttention, []verifierCase{
		{"none", OpAttention, map[string]any{}, ""},
		{"Phi-3-mini's", OpAttention, geometry(2, 16, 8), ""},
		{"one split", OpAttention, geometry(2, 1, 1), ""},
		{"part of one", OpAttention, map[string]any{"paged_stages": int64(2), "paged_splits": int64(4)}, "2 of"},
		{"no stage", OpAttention, geometry(0, 4, 4), "paged_stages 0"},
		{"nine stages", OpAttention, geometry(9, 4, 4), "paged_stages 9"},
		{"no split", OpAttention, geometry(2, 0, 4), "paged_splits 0"},
		{"three splits", OpAttention, geometry(2, 3, 4), "paged_splits 3"},
		{"32 splits", OpAttention, geometry(2, 32, 4), "paged_splits 32"},
		{"no tiles a split", OpAttention, geometry(2, 4, 0), "paged_split_tiles 0"},
		{"on a linear", OpLinear, geometry(2, 4, 4), "on a linear"},
	})
}

// TestPagedSplits: the largest power of two within the most splits whose
// splits each get the least tiles, one at least; across consecutive key
// tile counts a count at most doubles.
func TestPagedSplits(t *testing.T) {
	for _, c := range []struct{ n, splits, tiles, want int64 }{
		{1, 16, 8, 1}, {7, 16, 8, 1}, {8, 16, 8, 1}, {15, 16, 8, 1}, {16, 16, 8, 2}, {31, 16, 8, 2}, {32, 16, 8, 4},
		{64, 16, 8, 8}, {128, 16, 8, 16}, {469, 16, 8, 16}, {8, 16, 4, 2}, {9, 16, 2, 4}, {3, 16, 1, 2}, {100, 1, 1, 1}, {100, 4, 1, 4},
	} {
		if got := PagedSplits(c.n, c.splits, c.tiles); got != c.want {
			t.Errorf("PagedSplits(%d, %d, %d) = %d, want %d", c.n, c.splits, c.tiles, got, c.want)
		}
	}
	for _, tiles := range []int64{1, 2, 3, 4, 8, 16} {
		for n := int64(1); n < 600; n++ {
			if a, b := PagedSplits(n, 16, tiles), PagedSplits(n+1, 16, tiles); b != a && b != 2*a {
				t.Fatalf("tiles %d: %d key tiles %d splits, %d: %d", tiles, n, a, n+1, b)
			}
		}
	}
}

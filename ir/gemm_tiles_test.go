package ir

import (
	"strings"
	"testing"
)

// TestVerifyGEMMTiles: the verifier takes whole GEMM tiles of the shapes the
// kernel has on the three matrix ops and refuses a part of them, other tile
// shapes, splits outside 1..MaxGEMMSplits, stages outside
// 2..MaxGEMMStages, and the tiles on another op.
func TestVerifyGEMMTiles(t *testing.T) {
	staged := func(m, n, splits, stages int64) map[string]any {
		return map[string]any{"gemm_tile_m": m, "gemm_tile_n": n, "gemm_splits": splits, "gemm_stages": stages}
	}
	tiles := func(m, n, splits int64) map[string]any { return staged(m, n, splits, 4) }
	cases := []struct {
		name  string
		op    Op
		attrs map[string]any
		want  string // "": accepted
	}{
		{"none", OpLinear, map[string]any{}, ""},
		{"a split down", OpLinear, tiles(128, 128, 2), ""},
		{"a qkv's", OpQKV, tiles(64, 64, 1), ""},
		{"a swiglu's", OpSwiGLULinear, tiles(128, 128, 1), ""},
		{"part of them", OpLinear, map[string]any{"gemm_splits": int64(2)}, "1 of"},
		{"no stages", OpLinear, map[string]any{"gemm_tile_m": int64(64), "gemm_tile_n": int64(64), "gemm_splits": int64(1)}, "3 of"},
		{"32 tokens", OpLinear, tiles(32, 128, 1), "gemm_tile_m 32"},
		{"256 rows", OpQKV, tiles(128, 256, 1), "gemm_tile_n 256"},
		{"no splits", OpLinear, tiles(128, 128, 0), "gemm_splits 0"},
		{"too many splits", OpLinear, tiles(128, 128, MaxGEMMSplits+1), "gemm_splits 17"},
		{"2 stages", OpLinear, staged(128, 128, 1, 2), ""},
		{"1 stage", OpLinear, staged(128, 128, 1, 1), "gemm_stages 1"},
		{"too many stages", OpSwiGLULinear, staged(64, 128, 1, MaxGEMMStages+1), "gemm_stages 5"},
		{"on an MoE", OpMoE, tiles(128, 128, 1), "on a moe"},
	}
	for _, c := range cases {
		err := verifyGEMMTiles(&Node{Op: c.op, Attrs: c.attrs})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

package ir

import "testing"

// TestVerifyMoETiles: the verifier takes whole MoE GEMM tiles of the shapes
// the kernels have on an MoE and refuses a part of them, other tile
// shapes, stages outside 2..MaxGEMMStages, and the tiles on another op.
func TestVerifyMoETiles(t *testing.T) {
	tiles := func(m, n, stages int64) map[string]any {
		return map[string]any{"moe_tile_m": m, "moe_tile_n": n, "moe_stages": stages}
	}
	checkVerifier(t, verifyMoETiles, []verifierCase{
		{"none", OpMoE, map[string]any{}, ""},
		{"gpt-oss's", OpMoE, tiles(128, 128, 4), ""},
		{"a tiny plan's", OpMoE, tiles(64, 64, 2), ""},
		{"part of them", OpMoE, map[string]any{"moe_tile_m": int64(128)}, "1 of"},
		{"96 slots", OpMoE, tiles(96, 128, 4), "moe_tile_m 96"},
		{"256 rows", OpMoE, tiles(128, 256, 4), "moe_tile_n 256"},
		{"one stage", OpMoE, tiles(128, 128, 1), "moe_stages 1"},
		{"five stages", OpMoE, tiles(128, 128, 5), "moe_stages 5"},
		{"on a linear", OpLinear, tiles(128, 128, 4), "on a linear"},
	})
}

// TestVerifyMoEDownRows: the verifier takes moe_down_rows on an MoE within
// its range and refuses down rows that are not a power of two or exceed
// top_k, and the attribute on another op.
func TestVerifyMoEDownRows(t *testing.T) {
	rows := func(r int64) map[string]any { return map[string]any{"moe_down_rows": r, "top_k": int64(8)} }
	checkVerifier(t, verifyMoEDownRows, []verifierCase{
		{"none", OpMoE, map[string]any{"top_k": int64(8)}, ""},
		{"Qwen3-30B-A3B's", OpMoE, rows(2), ""},
		{"a whole expert's rows", OpMoE, rows(8), ""},
		{"0 rows", OpMoE, rows(0), "moe_down_rows 0"},
		{"3 rows", OpMoE, rows(3), "moe_down_rows 3"},
		{"16 rows of top-8", OpMoE, rows(16), "moe_down_rows 16"},
		{"on a linear", OpLinear, rows(2), "on a linear"},
	})
}

// TestVerifyMoEDownLanes: the verifier takes moe_down_lanes on an MoE, a
// power of two up to 32, and refuses others and the attribute on another
// op.
func TestVerifyMoEDownLanes(t *testing.T) {
	lanes := func(l int64) map[string]any { return map[string]any{"moe_down_lanes": l, "top_k": int64(8)} }
	checkVerifier(t, verifyMoEDownLanes, []verifierCase{
		{"none", OpMoE, map[string]any{"top_k": int64(8)}, ""},
		{"Qwen3-30B-A3B's", OpMoE, lanes(4), ""},
		{"whole warps", OpMoE, lanes(32), ""},
		{"0 lanes", OpMoE, lanes(0), "moe_down_lanes 0"},
		{"12 lanes", OpMoE, lanes(12), "moe_down_lanes 12"},
		{"64 lanes", OpMoE, lanes(64), "moe_down_lanes 64"},
		{"on a linear", OpLinear, lanes(4), "on a linear"},
	})
}

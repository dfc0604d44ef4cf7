package ir

import (
	"strings"
	"testing"
)

// TestVerifyMoETiles: the verifier takes whole MoE GEMM tiles of the shapes
// the kernels have on an MoE and refuses a part of them, other tile
// shapes, stages outside 2..MaxMoEStages, and the tiles on another op.
func TestVerifyMoETiles(t *testing.T) {
	tiles := func(m, n, stages int64) map[string]any {
		return map[string]any{"moe_tile_m": m, "moe_tile_n": n, "moe_stages": stages}
	}
	cases := []struct {
		name  string
		op    Op
		attrs map[string]any
		want  string // "": accepted
	}{
		{"none", OpMoE, map[string]any{}, ""},
		{"gpt-oss's", OpMoE, tiles(128, 128, 4), ""},
		{"a tiny plan's", OpMoE, tiles(64, 64, 2), ""},
		{"part of them", OpMoE, map[string]any{"moe_tile_m": int64(128)}, "1 of"},
		{"96 slots", OpMoE, tiles(96, 128, 4), "moe_tile_m 96"},
		{"256 rows", OpMoE, tiles(128, 256, 4), "moe_tile_n 256"},
		{"one stage", OpMoE, tiles(128, 128, 1), "moe_stages 1"},
		{"five stages", OpMoE, tiles(128, 128, 5), "moe_stages 5"},
		{"on a linear", OpLinear, tiles(128, 128, 4), "on a linear"},
	}
	for _, c := range cases {
		err := verifyMoETiles(&Node{Op: c.op, Attrs: c.attrs})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

package cuda_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
)

// TestMoEGEMMsFollowRecordedTiles: a prefill's expert GEMMs at gpt-oss-20b's
// and Qwen3-30B-A3B's real widths take the tiles chooseMoETiles recorded
// (MXFP4 128 slots, the K-quants 64): the kernels' template arguments, a
// grid of ceil(T/M) slot tiles by column tiles of N rows by the experts,
// MoEGEMMSmem of dynamic shared memory; another record gives other
// kernels, and an MoE without one is refused.
func TestMoEGEMMsFollowRecordedTiles(t *testing.T) {
	recorded := map[string]passes.MoETiles{"gpt-oss-20b": {M: 128, N: 128, Stages: 4}, "qwen3-30b-a3b": {M: 64, N: 128, Stages: 4}}
	for _, s := range moeTokShapes {
		g, man, _ := moeTokGraphSteps(t, s, 1, 2048, "")
		var m *ir.Node
		for _, n := range g.Nodes {
			if n.Op == ir.OpMoE {
				m = n
			}
		}
		check := func(want passes.MoETiles) {
			t.Helper()
			out, err := cuda.Generate(g, man, cuda.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cols := map[string]int64{"moe_gate_up_gemm": 2 * int64(s.f), "moe_down_gemm": int64(s.d)}
			seen := 0
			for _, l := range out.Kernels.Prefill {
				fn, _, _ := strings.Cut(l.Kernel, "_Moe")
				c, ok := cols[fn]
				if !ok {
					continue
				}
				seen++
				grid := [3][3]int64{{0, 1, 0}, {(c + want.N - 1) / want.N, 0, int64(s.e)}, {0, want.M, 0}}
				if suffix := fmt.Sprintf("_%d_%d_%d", want.M, want.N, want.Stages); !strings.HasSuffix(l.Kernel, suffix) ||
					l.Smem != int(passes.MoEGEMMSmem(want)) || [3][3]int64{l.GridA, l.GridB, l.GridDiv} != grid {
					t.Errorf("%s, tiles %+v: %s, grid %v %v %v, %d bytes of shared memory; want …%s, grid %v, %d bytes", s.name, want,
						l.Kernel, l.GridA, l.GridB, l.GridDiv, l.Smem, suffix, grid, passes.MoEGEMMSmem(want))
				}
			}
			if seen != 2 {
				t.Errorf("%s: %d expert GEMMs in the prefill, want 2", s.name, seen)
			}
		}
		want := recorded[s.name]
		if got := (passes.MoETiles{M: m.Int("moe_tile_m"), N: m.Int("moe_tile_n"), Stages: m.Int("moe_stages")}); got != want {
			t.Errorf("%s: chooseMoETiles recorded %+v, want %+v", s.name, got, want)
		}
		check(want)
		m.Attrs["moe_tile_m"], m.Attrs["moe_tile_n"], m.Attrs["moe_stages"] = int64(64), int64(64), int64(2)
		check(passes.MoETiles{M: 64, N: 64, Stages: 2})
		for _, k := range []string{"moe_tile_m", "moe_tile_n", "moe_stages"} {
			delete(m.Attrs, k)
		}
		if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "has no GEMM tiles (moe_tile_m, ...): the GPU passes choose them") {
			t.Errorf("%s: an MoE without tiles: %v, want a refusal", s.name, err)
		}
	}
}

package ir

import "fmt"

// The prefill GEMM tiles of an MoE node, which a GPU target's pass (passes,
// chooseMoETiles) records for codegen/cuda's moe_gate_up_gemm and
// moe_down_gemm: moe_tile_m, the slots of one expert a CTA takes;
// moe_tile_n, the weight rows it takes (gate and up: half of them each);
// moe_stages, the x tiles its ring of shared memory holds.
var moeTileAttrs = []string{"moe_tile_m", "moe_tile_n", "moe_stages"}

// The MoE GEMM tiles the kernels have: tile_m 64 or 128 slots (two warps
// along the slots, m16 tiles of 32 a pair), tile_n 64 or 128 rows (four
// warps along the rows, whole ldmatrix pairs of 8), 2 to MaxGEMMStages x
// tiles.

// verifyMoETiles checks an MoE node's GEMM tiles, where it has them: all
// three attributes, of the shapes the kernels have.
func verifyMoETiles(n *Node) error {
	if has, err := attrGroup(n, moeTileAttrs, "MoE GEMM tiles", OpMoE); !has || err != nil {
		return err
	}
	m, nn, s := n.Int("moe_tile_m"), n.Int("moe_tile_n"), n.Int("moe_stages")
	switch {
	case m != 64 && m != 128:
		return fmt.Errorf("moe_tile_m %d: want 64 or 128 slots", m)
	case nn != 64 && nn != 128:
		return fmt.Errorf("moe_tile_n %d: want 64 or 128 rows", nn)
	case s < 2 || s > MaxGEMMStages:
		return fmt.Errorf("moe_stages %d: want 2 to %d", s, MaxGEMMStages)
	}
	return nil
}

// verifyMoEDownLanes checks an MoE node's moe_down_lanes, which the same
// pass records beside moe_down_rows: the lanes of a warp that share one
// down row (a power of two up to 32; the warp takes 32/lanes row sets).
func verifyMoEDownLanes(n *Node) error {
	if has, err := attrGroup(n, []string{"moe_down_lanes"}, "MoE down lanes", OpMoE); !has || err != nil {
		return err
	}
	if l := n.Int("moe_down_lanes"); l < 1 || l > 32 || l&(l-1) != 0 {
		return fmt.Errorf("moe_down_lanes %d: want a power of two up to 32", l)
	}
	return nil
}

// verifyMoEDownRows checks an MoE node's moe_down_rows, which the same
// pass records for codegen/cuda's moe_down_sum_q8 (the down rows a warp
// takes of its expert), where it has one: a power of two no more than
// top_k (a block's warps split its rows among the top_k experts).
func verifyMoEDownRows(n *Node) error {
	if has, err := attrGroup(n, []string{"moe_down_rows"}, "MoE down rows", OpMoE); !has || err != nil {
		return err
	}
	if r, k := n.Int("moe_down_rows"), n.Int("top_k"); r < 1 || r&(r-1) != 0 || r > k {
		return fmt.Errorf("moe_down_rows %d: want a power of two up to top_k %d", r, k)
	}
	return nil
}

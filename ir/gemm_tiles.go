package ir

import "fmt"

// The tiles of a matrix node's tensor-core GEMM (codegen/cuda's gemm_linear,
// gemm_swiglu, gemm_qkv), which a GPU target's pass (passes,
// chooseGEMMTiles) records on a node whose prefill or batched-step kernel
// is the GEMM: gemm_tile_m, the tokens a CTA takes; gemm_tile_n, the weight
// rows it takes; gemm_splits, the ranges its K dimension is cut into, one a
// CTA, whose partial tiles the last to finish sums.
var gemmTileAttrs = []string{"gemm_tile_m", "gemm_tile_n", "gemm_splits"}

// MaxGEMMSplits bounds a GEMM's K splits: the merging CTA reads one partial
// tile a split.
const MaxGEMMSplits = 16

// verifyGEMMTiles checks a matrix node's GEMM tiles, where it has them: all
// three attributes, of the shapes the kernel has (64 or 128 tokens: two
// warps along them, m16 tiles of 32 a pair; 64 or 128 rows: four warps,
// whole ldmatrix pairs of 8), 1 to MaxGEMMSplits splits.
func verifyGEMMTiles(n *Node) error {
	if has, err := attrGroup(n, gemmTileAttrs, "GEMM tiles", OpLinear, OpQKV, OpSwiGLULinear); !has || err != nil {
		return err
	}
	m, nn, s := n.Int("gemm_tile_m"), n.Int("gemm_tile_n"), n.Int("gemm_splits")
	switch {
	case m != 64 && m != 128:
		return fmt.Errorf("gemm_tile_m %d: want 64 or 128 tokens", m)
	case nn != 64 && nn != 128:
		return fmt.Errorf("gemm_tile_n %d: want 64 or 128 rows", nn)
	case s < 1 || s > MaxGEMMSplits:
		return fmt.Errorf("gemm_splits %d: want 1 to %d", s, MaxGEMMSplits)
	}
	return nil
}

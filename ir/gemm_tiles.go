package ir

import "fmt"

// The tiles of a matrix node's tensor-core GEMM (codegen/cuda's gemm_linear,
// gemm_swiglu, gemm_qkv), which a GPU target's pass (passes,
// chooseGEMMTiles) records on a node whose prefill or batched-step kernel
// is the GEMM: gemm_tile_m, the tokens a CTA takes; gemm_tile_n, the weight
// rows it takes; gemm_splits, the ranges its K dimension is cut into, one a
// CTA, whose partial tiles the last to finish sums; gemm_stages, the x
// tiles its ring of shared memory holds.
var gemmTileAttrs = []string{"gemm_tile_m", "gemm_tile_n", "gemm_splits", "gemm_stages"}

// MaxGEMMStages bounds the x tiles of a GEMM's ring (the dense GEMMs' and
// the MoE's): 4 of 128 rows and two weight tiles of 128 take 110,592 bytes,
// two CTAs an H100 SM.
const MaxGEMMStages = 4

// MaxGEMMSplits bounds a GEMM's K splits: the merging CTA reads one partial
// tile a split.
const MaxGEMMSplits = 16

// verifyGEMMTiles checks a matrix node's GEMM tiles, where it has them: all
// three attributes, of the shapes the kernel has (64 or 128 tokens: two
// warps along them, m16 tiles of 32 a pair; 64 or 128 rows: four warps,
// whole ldmatrix pairs of 8), 1 to MaxGEMMSplits splits, 2 to
// MaxGEMMStages stages.
func verifyGEMMTiles(n *Node) error {
	if has, err := attrGroup(n, gemmTileAttrs, "GEMM tiles", OpLinear, OpQKV, OpSwiGLULinear); !has || err != nil {
		return err
	}
	m, nn, s, st := n.Int("gemm_tile_m"), n.Int("gemm_tile_n"), n.Int("gemm_splits"), n.Int("gemm_stages")
	switch {
	case m != 64 && m != 128:
		return fmt.Errorf("gemm_tile_m %d: want 64 or 128 tokens", m)
	case nn != 64 && nn != 128:
		return fmt.Errorf("gemm_tile_n %d: want 64 or 128 rows", nn)
	case s < 1 || s > MaxGEMMSplits:
		return fmt.Errorf("gemm_splits %d: want 1 to %d", s, MaxGEMMSplits)
	case st < 2 || st > MaxGEMMStages:
		return fmt.Errorf("gemm_stages %d: want 2 to %d", st, MaxGEMMStages)
	}
	return nil
}

package passes

import "github.com/llama-orch/orc/ir"

// The prefill attention's geometry (attend_prefill, codegen/cuda's
// attention.cu.tmpl): a block takes PrefillAttnRows query rows of a kv
// head's group (4 warps of 16) and, split over the grid's z dimension, a
// contiguous range of their keys, in tiles of PrefillAttnKeys.
const (
	PrefillAttnRows = 64
	PrefillAttnKeys = 64
	// prefillSplitKeys is the least keys a split takes, so a chunk whose
	// rows see at most that many (a fresh chunk of up to 512 tokens) keeps
	// one split and its kernel does what it did before splits.
	prefillSplitKeys = 512
	// maxPrefillSplits bounds the last block's merge (one partial a split).
	maxPrefillSplits = 32
	// PrefillResidentBlocks is how many blocks of attend_prefill an SM
	// holds where shared memory allows: its launch bounds keep 3 of 128
	// threads in 64K registers (160–167 a thread at head_dim 64–96, ptxas
	// for sm_90, no spills; unbounded, head_dim 96 took 185 and 2 a block).
	PrefillResidentBlocks = 3
	// prefillMaxWaves bounds a step's blocks, and so its partials, to that
	// many waves of resident blocks.
	prefillMaxWaves = 4
	// prefillGridPerSM bounds the grid at max_tokens: every block past the
	// splits a step uses exits at once, but tens of thousands of them
	// (gpt-oss's 2,048-token chunks) would still cost launch time.
	prefillGridPerSM = 32
)

// choosePrefillSplits records on every attention node the geometry of its
// prefill kernel, which splits a long chunk's keys across blocks
// (flash-decoding's split for prefill): prefill_splits, the grid's split
// dimension (the most splits a step may use: at most maxPrefillSplits, the
// grid at max_tokens at most prefillGridPerSM blocks an SM, no more than
// the context's keys fill at prefill_split_keys a split);
// prefill_split_keys, the least keys a split takes; prefill_split_blocks,
// the blocks the target holds at once (PrefillSplits' wave); and
// prefill_split_parts, the partials the step that leaves the most leaves,
// which bounds every step's (the plan's arena holds them). The kernel picks
// a step's splits at run time from these, its row blocks and the keys its
// rows see, so the one grid serves a fresh chunk (one split) and one after a
// long context.
func choosePrefillSplits(g *ir.Graph) error {
	gpu, err := graphGPU(g)
	if err != nil {
		return err
	}
	maxTokens, _ := g.Attrs["max_tokens"].(int64)
	ctx, _ := g.Attrs["ctx"].(int64)
	for _, n := range g.Nodes {
		if n.Op != ir.OpAttention {
			continue
		}
		kvh, grp, hd := n.Int("kv_heads"), n.Int("heads")/n.Int("kv_heads"), n.Int("head_dim")
		splits := min(maxPrefillSplits, prefillGridPerSM*gpu.SMs/PrefillRowBlocks(maxTokens, grp, kvh))
		if ctx > 0 {
			splits = min(splits, ceilDiv(ctx, prefillSplitKeys))
		}
		splits = max(splits, 1)
		resident := min(PrefillResidentBlocks, gpu.SmemPerSM/(PrefillAttnSmem(hd, splits)+1<<10))
		blocks := max(resident, 1) * gpu.SMs
		var parts int64
		for t := int64(1); t <= maxTokens; t++ {
			rb := PrefillRowBlocks(t, grp, kvh)
			if s := PrefillSplits(rb, splits, blocks, prefillMaxWaves*blocks); s > 1 {
				parts = max(parts, rb*s)
			}
		}
		n.Attrs["prefill_splits"] = splits
		n.Attrs["prefill_split_keys"] = int64(prefillSplitKeys)
		n.Attrs["prefill_split_blocks"] = blocks
		n.Attrs["prefill_split_parts"] = max(parts, 1)
	}
	return nil
}

// PrefillRowBlocks is a prefill step's row blocks: of T·G rows (G query
// heads a kv head), PrefillAttnRows a block, for each of the kv heads.
func PrefillRowBlocks(t, grp, kvh int64) int64 { return ceilDiv(t*grp, PrefillAttnRows) * kvh }

// PrefillSplits is attend_prefill's split count for a step of rowBlocks
// row blocks, which it computes alike from its grid: of 1 to splits, with
// at most parts blocks, the count whose blocks take the fewest waves of
// blocks (the target holds blocks at once) per unit of a row block's work,
// a larger count only where that is at least 1/32 fewer. Qwen2.5-0.5B's
// 512-token chunk (112 row blocks) takes 7 splits of 396 blocks' waves,
// 784 blocks in 2 waves; gpt-oss's (512) 2 where 2 are allowed: 1,024 in 3
// waves beside 512 in 2.
func PrefillSplits(rowBlocks, splits, blocks, parts int64) int64 {
	best, bestWaves := int64(1), ceilDiv(rowBlocks, blocks)
	for s := int64(2); s <= splits && rowBlocks*s <= parts; s++ {
		if w := ceilDiv(rowBlocks*s, blocks); 32*w*best < 31*bestWaves*s {
			best, bestWaves = s, w
		}
	}
	return best
}

// PrefillAttnSmem is attend_prefill's dynamic shared memory at head_dim hd
// with splits in its grid: two stages of K and V tiles of head_dim rounded
// up to 16 (and 8 halves of padding a row), later the block's rows (o, m,
// l) and the merge's weights.
func PrefillAttnSmem(hd, splits int64) int64 {
	hdp := ceilDiv(hd, 16) * 16
	return max(2*2*PrefillAttnKeys*(hdp+8)*2, (PrefillAttnRows*(hdp+4)+2*PrefillAttnRows+splits*PrefillAttnRows)*4)
}

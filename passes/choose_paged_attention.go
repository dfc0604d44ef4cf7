package passes

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
)

// choosePagedAttention decides, for the graph's GPU target, the geometry
// of each attention's batched-step kernel (attend_paged) and records it on
// the node for codegen/cuda (ir/paged_attention.go): ChoosePagedAttention.
func choosePagedAttention(g *ir.Graph) error {
	gpu, err := graphGPU(g)
	if err != nil {
		return err
	}
	return ChoosePagedAttention(g, gpu)
}

// ChoosePagedAttention records gpu's PagedAttention on every attention
// node of g, its splits within PagedPartsBudget at g's max_tokens and at
// most those of the most key tiles a query sees, those of g's context (its
// ctx attribute; 0: unknown) or of the node's window: no grid of blocks
// that no step could use (Phi-3-mini's 4,096 keys: 8; gpt-oss-20b's
// windows of 128: 1).
func ChoosePagedAttention(g *ir.Graph, gpu GPU) error {
	maxTokens, _ := g.Attrs["max_tokens"].(int64)
	ctx, _ := g.Attrs["ctx"].(int64)
	for _, n := range g.Nodes {
		if n.Op != ir.OpAttention {
			continue
		}
		if n.Int("head_dim") < 1 || n.Int("kv_heads") < 1 {
			return fmt.Errorf("attention %%%d: head_dim %d, kv_heads %d", n.ID, n.Int("head_dim"), n.Int("kv_heads"))
		}
		p := gpu.PagedAttention(n.Int("head_dim"), n.Int("kv_heads"))
		p.Splits = min(p.Splits, PagedSplitsWithin(PagedPartsBudget, maxTokens, n.Int("heads"), n.Int("head_dim")))
		if seen := pagedKeyTilesSeen(ctx, n.Int("window")); seen > 0 {
			p.Splits = ir.PagedSplits(seen, p.Splits, p.Tiles)
		}
		n.Attrs["paged_stages"], n.Attrs["paged_splits"], n.Attrs["paged_split_tiles"] = p.Stages, p.Splits, p.Tiles
	}
	return nil
}

// pagedKeyTilesSeen is the most key tiles of ir.PagedAttnKeys keys a
// query sees in a context of ctx positions, its window the last window
// keys (0: all); 0 where neither bounds them. A window of w keys ending at
// p starts at p − w + 1: key tiles (p − w + 1)/64 to p/64.
func pagedKeyTilesSeen(ctx, window int64) int64 {
	seen := int64(0)
	if ctx > 0 {
		seen = ceilDiv(ctx, ir.PagedAttnKeys)
	}
	if window > 0 {
		w := ceilDiv(window-1, ir.PagedAttnKeys) + 1
		if seen == 0 || w < seen {
			seen = w
		}
	}
	return seen
}

// PagedPartsBudget bounds the batch region's attend_paged partials: every
// token of a batched step may leave one a split of each head (its o and
// (m, l)), so more splits than it holds at the plan's tokens are not
// taken (gpt-oss-20b's 2,048 tokens of 64 heads: 4).
const PagedPartsBudget = 256 << 20

// PagedSplitsWithin is the most splits, a power of two from 1 to
// ir.MaxPagedSplits, whose partials for tokens tokens of heads heads of
// head_dim hd take at most budget bytes.
func PagedSplitsWithin(budget, tokens, heads, hd int64) int64 {
	perSplit := max(1, tokens) * heads * (hd + 2) * 4
	return ir.PagedSplits(budget/perSplit, ir.MaxPagedSplits, 1)
}

// PagedAttention is an attend_paged geometry (ir/paged_attention.go).
type PagedAttention struct{ Stages, Splits, Tiles int64 }

// PagedAttnResident is the most attend_paged blocks (128 threads) an SM
// holds: codegen bounds their registers to 128 a thread for four, where
// Phi-3-mini's head_dim 96 takes 168 unbounded, without spills.
const PagedAttnResident = 4

// PagedAttnBlocksPerSM is the attend_paged blocks an SM holds with a ring
// of stages at head_dim hd: PagedAttnResident, fewer where their rings do
// not fit its shared memory.
func (gpu GPU) PagedAttnBlocksPerSM(stages, hd int64, kv8 bool) int64 {
	return max(1, min(PagedAttnResident, gpu.SmemPerSM/(stages*PagedAttnStageBytes(hd, kv8)+1<<10)))
}

// PagedAttnStageBytes is one stage of attend_paged's ring for head_dim
// hd: a K and a V tile of ir.PagedAttnKeys keys, rows of hd padded to 16
// dims and 8 halves more (no bank conflicts), or an 8-bit cache's
// (attnTileRowBytes).
func PagedAttnStageBytes(hd int64, kv8 bool) int64 {
	return 2 * ir.PagedAttnKeys * attnTileRowBytes(hd, kv8)
}

// PagedAttnRefRows and PagedAttnRefTiles are the batched decode step a
// query's least key tiles a split are sized for: 16 rows at 512 keys (8
// key tiles) make about one wave of blocks; PagedAttnMinTiles bounds it
// below.
const (
	PagedAttnRefRows  = 16
	PagedAttnRefTiles = 8
	PagedAttnMinTiles = 4
)

// PagedAttention is the batched-step attention geometry for head_dim hd
// and kvh kv heads, an 8-bit cache's as an fp16 one's (four stages of its
// half-size tiles at Phi-3-mini's head_dim measured 9 % slower a step
// than two):
//
//   - Stages: the most up to PagedAttnStages whose ring takes at most
//     PagedAttnSmem, and at least two (a tile lands while the one before
//     is used): sm_90's 56 KiB hold two at Phi-3-mini's head_dim 96 (52
//     KiB), three at Qwen2.5's 64, so four blocks share an SM.
//   - Splits and Tiles: a query seeing n key tiles has
//     ir.PagedSplits(n, Splits, Tiles) splits, so its sums depend on its
//     position alone, whatever its step. Splits: ir.MaxPagedSplits, so
//     long rows of a step of few rows spread over the SMs. Tiles: those
//     of PagedAttnRefTiles that one split of PagedAttnRefRows rows' kv
//     heads would have at one wave of resident blocks (at most
//     PagedAttnResident an SM, fewer where their rings do not fit), a
//     power of two, at least PagedAttnMinTiles: 8 for Phi-3-mini's 32
//     kv heads on sm_90 (one split to 1,023 keys, 8 at 4,096), 4 for
//     Qwen2.5-0.5B's 2 (2 splits at 512 keys, 16 from 4,096). A block's
//     work is a latency chain (table, tiles, partials, merge): past one
//     wave, or at a tile or two a split, more splits cost more than the
//     SMs they fill (TestGPUPagedDecodeTiming, H200: Phi-3-mini 16 rows
//     at 512 keys 41.8 µs in one split, 51.6 in three; Qwen2.5 64 rows at
//     2,048 keys 33.8 in four, 57.0 in sixteen), while a row's keys in
//     one split are a walk of ~1.5 µs a key tile.
func (gpu GPU) PagedAttention(hd, kvh int64) PagedAttention {
	p := PagedAttention{Stages: 2, Splits: ir.MaxPagedSplits}
	for s := p.Stages + 1; s <= gpu.PagedAttnStages && s*PagedAttnStageBytes(hd, false) <= gpu.PagedAttnSmem; s++ {
		p.Stages = s
	}
	wave := max(1, gpu.PagedAttnWaves) * gpu.SMs * gpu.PagedAttnBlocksPerSM(p.Stages, hd, false)
	p.Tiles = PagedAttnMinTiles
	for p.Tiles*wave < PagedAttnRefTiles*PagedAttnRefRows*kvh {
		p.Tiles *= 2
	}
	return p
}

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
// node of g.
func ChoosePagedAttention(g *ir.Graph, gpu GPU) error {
	for _, n := range g.Nodes {
		if n.Op != ir.OpAttention {
			continue
		}
		if n.Int("head_dim") < 1 || n.Int("kv_heads") < 1 {
			return fmt.Errorf("attention %%%d: head_dim %d, kv_heads %d", n.ID, n.Int("head_dim"), n.Int("kv_heads"))
		}
		p := gpu.PagedAttention(n.Int("head_dim"), n.Int("kv_heads"))
		n.Attrs["paged_stages"], n.Attrs["paged_splits"] = p.Stages, p.Splits
	}
	return nil
}

// PagedAttention is an attend_paged geometry (ir/paged_attention.go).
type PagedAttention struct{ Stages, Splits int64 }

// PagedAttnResident is the most attend_paged blocks (128 threads) an SM
// holds: codegen bounds their registers to 128 a thread for four, where
// Phi-3-mini's head_dim 96 takes 168 unbounded, without spills.
const PagedAttnResident = 4

// PagedAttnBlocksPerSM is the attend_paged blocks an SM holds with a ring
// of stages at head_dim hd: PagedAttnResident, fewer where their rings do
// not fit its shared memory.
func (gpu GPU) PagedAttnBlocksPerSM(stages, hd int64) int64 {
	return max(1, min(PagedAttnResident, gpu.SmemPerSM/(stages*PagedAttnStageBytes(hd)+1<<10)))
}

// PagedAttnStageBytes is one stage of attend_paged's ring for head_dim
// hd: a K and a V tile of ir.PagedAttnKeys keys, rows of hd padded to 16
// dims and 8 halves more (no bank conflicts).
func PagedAttnStageBytes(hd int64) int64 {
	return 2 * ir.PagedAttnKeys * (ceilDiv(hd, 16)*16 + 8) * 2
}

// PagedAttnDecodeRows is the batched decode step the split count is
// sized for: 64 sequences, a token each (the most a batched decode
// schedule takes).
const PagedAttnDecodeRows = 64

// PagedAttention is the batched-step attention geometry for head_dim hd
// and kvh kv heads:
//
//   - Stages: the most up to PagedAttnStages whose ring takes at most
//     PagedAttnSmem, and at least two (a tile lands while the one before
//     is used): sm_90's 56 KiB hold two at Phi-3-mini's head_dim 96 (52
//     KiB), three at Qwen2.5's 64, so four blocks share an SM.
//   - Splits: the blocks a tile's key tiles are dealt to, whatever the
//     step (so a row's sums run in one order however it was chunked):
//     the most whose decode step of PagedAttnDecodeRows rows fits in
//     PagedAttnWaves grids of the blocks the SMs hold at once (at most
//     PagedAttnResident each, fewer where their rings do not fit), 1 to
//     ir.MaxPagedSplits: 1 for Phi-3-mini's 32 kv heads on sm_90, 4 for
//     Qwen2.5-0.5B's 2. A block's work is a latency chain (table, tiles,
//     partials, merge), so a grid past one wave, or splits of a tile or
//     two, cost more than the SMs they fill: on an H200 at 16 and 64
//     rows of 512 to 2,048 keys both models were fastest so
//     (TestGPUPagedDecodeTiming; Qwen2.5 at 16 rows × 2,048 keys
//     within 7 % of the best, 8 splits). What it gives up: a step of few
//     rows deep in context has few blocks, each walking a row's keys
//     (Phi-3-mini: 2 rows × 32 kv heads, 64 blocks of 64 key tiles at
//     4,096), which more splits would share out; a split count per row
//     from its own length would serve both and keep a row's sums
//     independent of its step.
func (gpu GPU) PagedAttention(hd, kvh int64) PagedAttention {
	p := PagedAttention{Stages: 2}
	for s := p.Stages + 1; s <= gpu.PagedAttnStages && s*PagedAttnStageBytes(hd) <= gpu.PagedAttnSmem; s++ {
		p.Stages = s
	}
	blocks := max(1, gpu.PagedAttnWaves) * gpu.SMs * gpu.PagedAttnBlocksPerSM(p.Stages, hd)
	p.Splits = min(ir.MaxPagedSplits, max(1, blocks/(PagedAttnDecodeRows*kvh)))
	return p
}

package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// prefillShape is attend_prefill's geometry for an attention node, as the
// choosePrefillSplits pass recorded it: the grid's splits, the least keys
// a split takes, the blocks of a wave and the most partials a step leaves.
type prefillShape struct{ kvh, grp, hd, splits, keys, blocks, parts int64 }

func prefillShapeOf(n *ir.Node) (prefillShape, error) {
	kvh := n.Int("kv_heads")
	p := prefillShape{kvh: kvh, grp: n.Int("heads") / kvh, hd: n.Int("head_dim"), splits: n.Int("prefill_splits"),
		keys: n.Int("prefill_split_keys"), blocks: n.Int("prefill_split_blocks"), parts: n.Int("prefill_split_parts")}
	if p.splits < 1 || p.keys < 1 || p.blocks < 1 || p.parts < 1 {
		return p, fmt.Errorf("attention records no prefill geometry (prefill_splits %d, prefill_split_keys %d, prefill_split_blocks %d, prefill_split_parts %d): run the pass pipeline (choosePrefillSplits)",
			p.splits, p.keys, p.blocks, p.parts)
	}
	return p, nil
}

// partBytes is the partials of the step that leaves the most: per row
// block and split, o [64][HD] and (m, l) [64] floats (attend_prefill's
// slots).
func (p prefillShape) partBytes() int64 {
	if p.splits < 2 {
		return 0
	}
	return p.parts * passes.PrefillAttnRows * (p.hd + 2) * 4
}

// prefillArea is the arena the prefill attentions share after the
// decode's: the partials of the largest, and one arrival counter per row
// block at max_tokens, zero between launches (the arena starts zeroed and
// the merging block resets its counter).
type prefillArea struct{ part, counters, end int64 }

func newPrefillArea(g *ir.Graph, maxTokens, base int64) prefillArea {
	var part, counters int64
	for _, n := range g.Nodes {
		if n.Op != ir.OpAttention {
			continue
		}
		if p, err := prefillShapeOf(n); err == nil && p.splits > 1 { // else attention refuses the node, or it leaves no partials
			part, counters = max(part, p.partBytes()), max(counters, 4*passes.PrefillRowBlocks(maxTokens, p.grp, p.kvh))
		}
	}
	cnt := base + alignUp(part, plans.Alignment)
	return prefillArea{part: base, counters: cnt, end: cnt + alignUp(counters, plans.Alignment)}
}

// attendPrefillArgs serve attend_prefill: attendArgs' config, sinks and
// output codes, and the node's prefill geometry.
type attendPrefillArgs struct {
	A                           string
	S                           accessor
	Sinks, Q8                   bool
	Splits, Keys, Blocks, Parts int64
}

// attendPrefill emits attention node n's attend_prefill, its arguments up
// to y's codes in att: grid (ceil(T·G/64), KVH, splits).
func (e *emitter) attendPrefill(att *call, n *ir.Node, targs attendArgs) ([]plans.Launch, error) {
	p, err := prefillShapeOf(n)
	if err != nil {
		return nil, err
	}
	smem := passes.PrefillAttnSmem(p.hd, p.splits)
	if smem > e.SmemPerSM-1<<10 {
		return nil, fmt.Errorf("attend_prefill's %d splits take %d bytes of shared memory, more than an SM has (%d)", p.splits, smem, e.SmemPerSM)
	}
	att.arg(cOut, "part", plans.Arg{Kind: plans.ArgArena, Offset: e.prefillAttn.part})
	att.arg("int* __restrict__", "counters", plans.Arg{Kind: plans.ArgArena, Offset: e.prefillAttn.counters})
	e.stateArg(att)
	g := grid{a: [3]int64{p.grp, 0, 0}, b: [3]int64{0, p.kvh, p.splits}, div: [3]int64{passes.PrefillAttnRows, 0, 0}}
	ls, err := e.emitBounded(att, "attend_prefill", attWarps*32, passes.PrefillResidentBlocks, g,
		attendPrefillArgs{A: targs.A, S: targs.S, Sinks: targs.Sinks, Q8: targs.Q8, Splits: p.splits, Keys: p.keys, Blocks: p.blocks, Parts: p.parts})
	if err == nil {
		ls[0].Smem = int(smem)
	}
	return ls, err
}

package cuda

import (
	"fmt"
	"slices"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// The batched step: the graph's nodes before its one last
// node run as in a prefill over all the step's tokens, whatever sequence
// each belongs to (every kernel but attention treats rows alike); each
// attention stores its k, v in the paged pool (kv_store_paged) and attends
// over its token's own sequence (attend_paged). Then each row's last token
// is gathered (gather_rows) and the nodes after last run once per row, on
// clones of them with T rows whose values lie in the batch region; last,
// batch_argmax leaves each row's greedy pick.
//
// The pool (plans.ArgKVPool) is blocks of BT positions of every layer's K
// and V, so a sequence's table names one block per BT positions for all
// layers, as runtime/kvcache counts them. Why so: the prefill's kernels
// treat rows alike, so only what reads or writes a sequence's cache
// changes, and one schedule serves every mix of prefill chunks and decode
// tokens (T is the step's tokens). The block size, the table stride and
// the tables are state fields, so nothing in the schedule depends on them.
// attend_paged is flash attention on the tensor cores over tiles of a
// row's tokens (up to 16 (token, head) rows share each K/V tile loaded; a
// decode token is a tile of its own), each tile's 64-key tiles dealt to
// the node's paged_splits blocks by their absolute position, so a row's
// sums run in one order however its sequence was chunked or batched;
// their partials in the batch region's start are merged by the last of a
// tile's splits to arrive.
//
// A step of decode tokens alone of at most passes.BatchDecodeRows rows
// runs the per-token part as batchDecodeTokens emits it instead: the same
// nodes, paged attention and values, but the matrix products on the
// tensor cores over the step's tokens (batch_decode_kernel mma_tokens:
// each weight group unpacked once for 16 rows, ops_mma_tokens.go; q8's
// token tiles of 8 where the weights have no tensor-core fragments; an
// MoE's experts over their slots, each routed expert read once, moeTokens),
// where the prefill's GEMMs, tiled for hundreds of rows, launch out/128
// blocks (Phi-3's down: 24 on 132 SMs) that each walk all of K.
// Any other step of at most as many tokens (decode tokens beside short
// prefill chunks) runs those products too, its attention by tiles as the
// batched step's (plans.Kernels.BatchFew): its decode rows are then
// computed by the kernels of a step of decode tokens alone, not by GEMMs
// that round the dequantized weights and x to f16.

// batchMaxRows bounds a batched step's rows: the batch region holds the
// per-row activations and logits of this many (64 × Qwen2.5's 151,936
// logits: 39 MB).
const batchMaxRows = 64

// pagedThreads is attend_paged's PAGED_WARPS·32, pagedTileRows the
// (token, head) rows of its tiles (one 16-row fragment), argmaxThreads
// ARGMAX_THREADS (paged.cu.tmpl).
const (
	pagedThreads  = 128
	pagedTileRows = 16
	argmaxThreads = 512
)

// pagedShape is the batched-step attention geometry node n records
// (passes.choosePagedAttention): the key tiles a block keeps in flight and
// the blocks a tile's key tiles are dealt to.
type pagedShape struct {
	stages, splits, tiles, hd int64
	kv8                       bool // an 8-bit cache's tiles
}

func pagedShapeOf(n *ir.Node) (pagedShape, error) {
	if _, ok := n.Attrs["paged_stages"]; !ok {
		return pagedShape{}, fmt.Errorf("attention %%%d has no batched-step geometry (paged_stages, paged_splits, paged_split_tiles): the GPU passes choose it", n.ID)
	}
	return pagedShape{stages: n.Int("paged_stages"), splits: n.Int("paged_splits"), tiles: n.Int("paged_split_tiles"), hd: n.Int("head_dim"), kv8: ir.KVQ8(n)}, nil
}

// smem is attend_paged's dynamic shared memory: its ring of K and V
// tiles, later the four warps' 16 rows (o, m, l).
func (p pagedShape) smem() int64 {
	hdp := paddedHD(p.hd)
	return max(p.stages*passes.PagedAttnStageBytes(p.hd, p.kv8), (4*16*(hdp+4)+2*4*16)*4)
}

// pagedScratch is the batch region's first bytes: attend_paged's
// partials, per (token, kv head, split) a group's o [G·HD] and (m, l) per
// head [G] floats (any tile of a step may take all its splits), for the
// largest attention of g's first at nodes, then its arrival counters, one
// per (token, kv head) (a tile's at its first token), at counters.
func (e *emitter) pagedScratch(g *ir.Graph, at int) (counters, bytes int64, err error) {
	var part, kvhs int64
	for _, n := range g.Nodes[:at] {
		if n.Op != ir.OpAttention || n.Int("kv_heads") < 1 {
			continue
		}
		p, err := pagedShapeOf(n)
		if err != nil {
			return 0, 0, err
		}
		kvh, grp := n.Int("kv_heads"), n.Int("heads")/n.Int("kv_heads")
		parts := e.maxTokens * kvh * p.splits
		part, kvhs = max(part, parts*(grp*n.Int("head_dim")+2*grp)*4), max(kvhs, kvh)
	}
	counters = alignUp(part, plans.Alignment)
	return counters, counters + alignUp(4*e.maxTokens*kvhs, plans.Alignment), nil
}

// batchSchedules is what the batched step adds to a plan.
type batchSchedules struct {
	tokens, rows []plans.Launch
	// decode is tokens for a step of decode tokens alone of at most
	// decodeRows rows, few for another step of at most decodeRows tokens
	// (batchDecodeTokens).
	decode, few   []plans.Launch
	maxRows       int64
	decodeRows    int64
	bytes, logits int64 // the batch region's size and the logits' offset in it
}

// batchState lays out the batch's state fields after st's block (plans.State).
func batchState(st plans.State, maxTokens, maxRows int64) plans.State {
	st.Rows = st.Bytes
	st.Paging = st.Rows + 16
	st.RowOf = st.Paging + 16
	st.LastTokens = st.RowOf + 4*maxTokens
	st.Picks = alignUp(st.LastTokens+4*maxRows, 16)
	st.Tables = alignUp(st.Picks+8*maxRows, 16)
	return st
}

// batchable is the index of g's one last node where g is a model a
// batched step serves: attention before one last node, the logits (its first output, of
// the vocabulary's width) computed after it, the model's layers known
// (the pool's layout); else -1. Kernel harnesses' graphs are not.
func (e *emitter) batchable(g *ir.Graph) int {
	at := -1
	for i, n := range g.Nodes {
		if n.Op == ir.OpLast {
			if at >= 0 {
				return -1
			}
			at = i
		}
	}
	if at < 0 || e.model.NLayer < 1 || len(g.Outputs) == 0 || !slices.ContainsFunc(g.Nodes[:at], func(n *ir.Node) bool { return n.Op == ir.OpAttention }) {
		return -1
	}
	if cols, err := activation(g.Outputs[0]); err != nil || cols != int64(e.model.Vocab) || !slices.Contains(g.Nodes[at:], g.Outputs[0]) {
		return -1
	}
	return at
}

// batch emits the batched step's schedules for g, or nil where g is not
// batchable.
func (e *emitter) batch(g *ir.Graph) (*batchSchedules, error) {
	at := e.batchable(g)
	if at < 0 {
		return nil, nil
	}
	counters, scratch, err := e.pagedScratch(g, at)
	if err != nil {
		return nil, err
	}
	e.pagedCounters = counters
	b := &batchSchedules{maxRows: min(e.maxTokens, batchMaxRows), bytes: scratch}
	e.state = batchState(e.state, e.maxTokens, b.maxRows)
	e.prefill, e.batching, e.scratchHolds = true, true, scratchNone
	defer func() { e.batching, e.stateAt, e.batchValues = false, 0, nil }()
	for _, n := range g.Nodes[:at] {
		ls, err := e.node(n)
		if err != nil {
			return nil, fmt.Errorf("codegen/cuda: node %d (%s): %w", n.ID, n.Op, err)
		}
		b.tokens = append(b.tokens, ls...)
	}
	if e.decodeDiffers(g.Nodes[:at]) {
		if b.decode, err = e.batchDecodeTokens(g, at, false); err != nil {
			return nil, err
		}
		if b.few, err = e.batchDecodeTokens(g, at, true); err != nil {
			return nil, err
		}
		b.decodeRows = min(b.maxRows, passes.BatchDecodeRows)
	}
	last := g.Nodes[at]
	gathered, tail, err := e.batchTail(g, at, b)
	if err != nil {
		return nil, err
	}
	// The per-row launches read the rows header as their state: T = rows.
	e.stateAt, e.scratchHolds = e.state.Rows, scratchNone
	cols, err := activation(last)
	if err != nil {
		return nil, err
	}
	c := &call{}
	c.ptr(e, cIn, "x", last.Inputs[0])
	c.arg(cInts, "last", plans.Arg{Kind: plans.ArgState, Offset: e.state.LastTokens})
	c.ptr(e, cOut, "y", gathered)
	e.stateArg(c)
	ls, err := e.emit(c, "gather_rows", 256, gridRowsX(0), gatherArgs{cols})
	if err != nil {
		return nil, err
	}
	b.rows = append(b.rows, ls...)
	for _, n := range tail {
		ls, err := e.node(n)
		if err != nil {
			return nil, fmt.Errorf("codegen/cuda: batched node %d (%s): %w", n.ID, n.Op, err)
		}
		b.rows = append(b.rows, ls...)
	}
	a := &call{}
	a.arg(cIn, "logits", plans.Arg{Kind: plans.ArgBatch, Offset: b.logits})
	a.arg("int* __restrict__", "picks", plans.Arg{Kind: plans.ArgState, Offset: e.state.Picks})
	e.stateArg(a)
	ls, err = e.emit(a, "batch_argmax", argmaxThreads, gridRowsX(0), argmaxArgs{int64(e.model.Vocab)})
	b.rows = append(b.rows, ls...)
	return b, err
}

// batchDecodeTokens emits the per-token schedule of a batched step of
// decode tokens alone (T = its rows, at most passes.BatchDecodeRows): g's
// nodes before its last node (at) as the batched step's, but for the
// matrix kernels, chooseKernels' batch_decode_kernel (the integer path's
// token tiles, which read each weight once for a tile's rows, where the
// prefill's GEMM tiles of 64 rows leave most SMs idle). With tiles, that
// of any other step of at most as many tokens (decode tokens beside short
// prefill chunks): attention by tiles of a row's tokens, as the batched
// step's, so such steps take the decode products rather than the
// prefill's GEMMs.
func (e *emitter) batchDecodeTokens(g *ir.Graph, at int, tiles bool) ([]plans.Launch, error) {
	e.batchDecode, e.pagedTiles, e.scratchHolds = true, tiles, scratchNone
	defer func() { e.batchDecode, e.pagedTiles, e.scratchHolds = false, false, scratchNone }()
	var out []plans.Launch
	for _, n := range g.Nodes[:at] {
		ls, err := e.node(n)
		if err != nil {
			return nil, fmt.Errorf("codegen/cuda: node %d (%s): %w", n.ID, n.Op, err)
		}
		out = append(out, ls...)
	}
	return out, nil
}

// decodeDiffers reports whether a matrix node or MoE of nodes (a batched
// step's per-token part) takes a kernel in a step of decode tokens alone other
// than its prefill's, so that the step has a schedule of its own.
func (e *emitter) decodeDiffers(nodes []*ir.Node) bool {
	return slices.ContainsFunc(nodes, func(n *ir.Node) bool {
		switch n.Op {
		case ir.OpLinear, ir.OpQKV, ir.OpSwiGLULinear, ir.OpMoE:
			return n.Str("batch_decode_kernel") != n.Str("prefill_kernel")
		}
		return false
	})
}

// batchTail clones the nodes after g's last node (at) to run T = rows
// rows, their values in the batch region (b.bytes, b.logits), and returns
// the clone of last (the gathered rows) and the clones in order. A clone
// keeps its node's attributes but the decisions made for one row: its
// prefill kernel is the batch_kernel chooseKernels recorded, and it
// neither stages nor writes int16 codes (its readers quantize what they
// read).
func (e *emitter) batchTail(g *ir.Graph, at int, b *batchSchedules) (*ir.Node, []*ir.Node, error) {
	e.batchValues = map[*ir.Node]plans.Arg{}
	clones := map[*ir.Node]*ir.Node{}
	place := func(n *ir.Node) error {
		cols, err := activation(n)
		if err != nil {
			return err
		}
		e.batchValues[n] = plans.Arg{Kind: plans.ArgBatch, Offset: b.bytes}
		b.bytes += alignUp(4*b.maxRows*cols, plans.Alignment)
		return nil
	}
	clone := func(n *ir.Node) *ir.Node {
		c := &ir.Node{ID: n.ID, Op: n.Op, DType: n.DType, Shape: append(ir.Shape{ir.T}, n.Shape[1:]...), Attrs: map[string]any{}}
		for k, v := range n.Attrs {
			switch {
			case slices.Contains(overlapRecords, k):
			case k == "offset", k == "kernel", k == "stages_x", k == "prefill_stages_x", k == "writes_codes", k == "prefill_writes_codes", k == "batch_decode_writes_codes",
				k == "row_in_place", k == "fold_norm", k == "writes_sum", k == "router_logits":
			default:
				c.Attrs[k] = v
			}
		}
		clones[n] = c
		return c
	}
	last := g.Nodes[at]
	gathered := clone(last)
	if err := place(gathered); err != nil {
		return nil, nil, err
	}
	var tail []*ir.Node
	for _, n := range g.Nodes[at+1:] {
		if n.Op == ir.OpWeight {
			continue
		}
		if n.Op == ir.OpView || n.Op == ir.OpSplit || n.Op == ir.OpMoE || n.Op == ir.OpAttention {
			return nil, nil, fmt.Errorf("codegen/cuda: a batched step runs %s after the last row (node %d) only per token", n.Op, n.ID)
		}
		if len(n.Shape) != 2 || n.Shape[0] != 1 {
			return nil, nil, fmt.Errorf("codegen/cuda: node %d (%s) after the last row is %v, not one row", n.ID, n.Op, n.Shape)
		}
		c := clone(n)
		for _, in := range n.Inputs {
			switch {
			case clones[in] != nil:
				c.Inputs = append(c.Inputs, clones[in])
			case in.Op == ir.OpWeight:
				c.Inputs = append(c.Inputs, in)
			default:
				return nil, nil, fmt.Errorf("codegen/cuda: node %d (%s) after the last row reads node %d, a value of every token", n.ID, n.Op, in.ID)
			}
		}
		if _, ok := n.Attrs["prefill_kernel"]; ok {
			if c.Attrs["prefill_kernel"] = n.Str("batch_kernel"); n.Str("batch_kernel") == "" {
				return nil, nil, fmt.Errorf("codegen/cuda: node %d (%s) after the last row has no batch_kernel: run the chooseKernels pass", n.ID, n.Op)
			}
		}
		for _, in := range c.Inputs {
			e.users[in] = append(e.users[in], c)
		}
		if err := place(c); err != nil {
			return nil, nil, err
		}
		tail = append(tail, c)
	}
	b.logits = e.batchValues[clones[g.Outputs[0]]].Offset
	return gathered, tail, nil
}

// pagedGrid is attend_paged's grid (x, KVH, splits) for attentions of
// group query heads a kv head: x bounds a step's tiles (paged_tile), whose
// blocks past them exit. z is the node's most splits here; the launch's
// split rule (plans.SplitRule) has the runtime size it by the step, to
// the most its queries take, and blocks of a tile past its queries' exit.
// A row of n tokens is ceil(n/TQ) tiles, so a step of T tokens in at most
// rows rows has at most (T + rows·(TQ−1))/TQ, and a step of decode tokens
// alone (decode) T.
func pagedGrid(p pagedShape, group, kvh, rows int64, decode bool) (grid, error) {
	tq := pagedTileRows / group // TQ
	if tq < 1 {
		return grid{}, fmt.Errorf("attend_paged takes a kv head's group of at most %d query heads, not %d", pagedTileRows, group)
	}
	if decode {
		return grid{a: [3]int64{1, 0, 0}, b: [3]int64{0, kvh, p.splits}}, nil
	}
	return grid{a: [3]int64{1, 0, 0}, b: [3]int64{rows * (tq - 1), kvh, p.splits}, div: [3]int64{tq, 0, 0}}, nil
}

// attendPaged: a batched step's attention node n (config cfg): its k, v to
// the paged pool, then attend_paged over each token's own sequence in the
// node's geometry, its splits' partials and counters at the batch region's
// start (pagedScratch).
func (e *emitter) attendPaged(n *ir.Node, cfg string) ([]plans.Launch, error) {
	q, k, v := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	heads, kvh, hd := n.Int("heads"), n.Int("kv_heads"), n.Int("head_dim")
	nl := int64(e.model.NLayer)
	shape, err := pagedShapeOf(n)
	if err != nil {
		return nil, err
	}
	state := func(off int64) plans.Arg { return plans.Arg{Kind: plans.ArgState, Offset: off} }
	positions, rowOf, last := state(e.state.Positions), state(e.state.RowOf), state(e.state.LastTokens)
	paging, tables := state(e.state.Paging), state(e.state.Tables)
	layer := plans.Arg{Kind: plans.ArgInt, Value: n.Int("layer")}
	pool := plans.Arg{Kind: plans.ArgKVPool}
	part := plans.Arg{Kind: plans.ArgBatch, Offset: 0} // pagedScratch
	store := &call{}
	store.ptr(e, cIn, "k", k)
	store.ptr(e, cIn, "v", v)
	store.arg(cInts, "positions", positions)
	store.arg(cInts, "row_of", rowOf)
	store.arg(cInts, "paging", paging)
	store.arg(cInts, "tables", tables)
	store.arg(cCache, "pool", pool)
	store.arg("int", "layer", layer)
	e.stateArg(store)
	ls, err := e.emit(store, "kv_store_paged", 256, kvStoreGrid(n, kvh, hd, 8), pagedArgs{A: cfg, NL: nl})
	if err != nil {
		return nil, err
	}
	att := &call{}
	att.ptr(e, cIn, "q", q)
	att.arg("const __half* __restrict__", "pool", pool)
	sinks, err := e.sinks(att, n, heads)
	if err != nil {
		return nil, err
	}
	att.arg(cInts, "positions", positions)
	att.arg(cInts, "last", last)
	att.arg(cInts, "nrows", state(e.state.Rows))
	att.arg(cInts, "paging", paging)
	att.arg(cInts, "tables", tables)
	att.arg("int", "layer", layer)
	att.ptr(e, cOut, "y", n)
	att.arg(cOut, "part", part)
	att.arg("int* __restrict__", "counters", plans.Arg{Kind: plans.ArgBatch, Offset: e.pagedCounters})
	e.stateArg(att)
	decode := e.batchDecode && !e.pagedTiles
	g, err := pagedGrid(shape, heads/kvh, kvh, min(e.maxTokens, batchMaxRows), decode)
	if err != nil {
		return nil, err
	}
	hasSinks := len(n.Inputs) == 4
	la, err := e.emitBounded(att, "attend_paged", pagedThreads, int(e.PagedAttnBlocksPerSM(shape.stages, hd, shape.kv8)), g,
		attendPagedArgs{A: cfg, S: sinks, Sinks: hasSinks, NL: nl, Splits: shape.splits, Tiles: shape.tiles, Stages: shape.stages, Decode: decode})
	if err != nil {
		return nil, err
	}
	la[0].Smem = int(shape.smem())
	// Grid z: the splits the step's queries take, not the node's most.
	la[0].Splits = &plans.SplitRule{Most: shape.splits, Tiles: shape.tiles, KeyTile: ir.PagedAttnKeys, Windowed: n.Int("window") > 0}
	return append(ls, la...), nil
}

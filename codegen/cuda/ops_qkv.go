package cuda

import (
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// qkv(x, wq, wk, wv [, bq, bk, bv] [, positions]): one launch for the three
// projections, roped when the node carries rope_mode.
func (e *emitter) qkv(n *ir.Node) ([]plans.Launch, error) {
	x := n.Inputs[0]
	in, err := activation(x)
	if err != nil {
		return nil, err
	}
	q, err := e.qkvInputs(n, in)
	if err != nil {
		return nil, err
	}
	c := &call{}
	accs, outs, rope := q.accs, q.outs, q.rope
	bAccs := e.qkvWeights(c, n, q)
	kernel := e.kernelOf(n)
	if kernel == ir.KernelGEMM {
		return e.gemmQKV(c, n, in, q, bAccs)
	}
	var quant []plans.Launch
	var xt mmaX
	switch kernel {
	case ir.KernelMMA:
		if quant, xt, err = e.mmaInput(c, x, in); err != nil {
			return nil, err
		}
	case ir.KernelQ8, ir.KernelMMATokens:
		if quant, err = e.quantizedX(c, x, in); err != nil {
			return nil, err
		}
	default:
		c.ptr(e, cIn, "x", x)
	}
	// The positions of this step, from the state block (what a positions
	// input reads too): the rope epilogue and the cache store need them.
	c.arg(cInts, "positions", plans.Arg{Kind: plans.ArgState, Offset: e.state.Positions})
	c.ptr(e, cOut, "y", n)
	kv := false
	if att := e.storesKVOf(n); att != nil {
		kc, vc := kvArgs(att)
		c.arg(cCache, "kc", kc)
		c.arg(cCache, "vc", vc)
		kv = true
	} else {
		c.null()
		c.null()
	}
	e.stateArg(c)
	if kernel == ir.KernelGEMV {
		pairs := (outs[0] + outs[1] + outs[2]) / 2
		return e.emit(c, "qkv_gemv", 128, gridRowsY(ceilDiv(pairs, 4), rowsOf(x)), qkvGEMVArgs{
			WQ: accs[0], WK: accs[1], WV: accs[2], BQ: bAccs[0], BK: bAccs[1], BV: bAccs[2],
			R: rope, In: in, NQ: outs[0], NK: outs[1], NV: outs[2], KV: kv})
	}
	if kernel == ir.KernelMMAHalves { // tiles of 8 rotation pairs, each within one part
		tiles := ceilDiv(outs[0]/2, 8) + ceilDiv(outs[1]/2, 8) + ceilDiv(outs[2]/2, 8)
		return e.mmaHalves(c, n, x, in, "qkv_mmah", tiles, func(sh mmahShape) any {
			return qkvMMAHArgs{WQ: accs[0], WK: accs[1], WV: accs[2], BQ: bAccs[0], BK: bAccs[1], BV: bAccs[2],
				R: rope, In: in, NQ: outs[0], NK: outs[1], NV: outs[2], KV: kv, mmahShape: sh}
		})
	}
	if kernel == ir.KernelMMATokens { // blocks of 8 rotation pairs, each within one part
		blocks := ceilDiv(outs[0]/2, 8) + ceilDiv(outs[1]/2, 8) + ceilDiv(outs[2]/2, 8)
		ls, err := e.mmaTokensLaunch(c, n, x, n.Inputs[1], in, "qkv_mmat", blocks, func(nw, nt, rows int64, st mmatStream) any {
			a := qkvMMATArgs{WQ: accs[0], WK: accs[1], WV: accs[2], BQ: bAccs[0], BK: bAccs[1], BV: bAccs[2],
				R: rope, In: in, NQ: outs[0], NK: outs[1], NV: outs[2], KV: kv, NW: nw, NT: nt, Rows: rows}
			if st.KSL > 0 {
				return qkvMMATStreamArgs{a, st}
			}
			return a
		})
		return append(quant, ls...), err
	}
	// Blocks of 2·sets rotation pairs, each within one part (qkv_q8).
	s, sets := e.IntLanes(n.Inputs[1].DType, in, outs[0]+outs[1]+outs[2])
	var blocks int64
	for _, o := range outs {
		blocks += ceilDiv(o/2, 2*sets)
	}
	tt := e.tokenTile(x)
	if kernel == ir.KernelMMA {
		mma := mmaShapeOf(n)
		c.startsLate = n.Bool("starts_late")
		// Its registers must let the stream's blocks share an SM: Q6_K's
		// codes took a Q4_K_M qkv (Llama-3.1-8B's v) to 166 registers,
		// one block an SM, two waves.
		perSM := int(ceilDiv(mma.st.Blocks, e.SMs))
		ls, err := stream(mma.st).launch(e.emitBounded(c, "qkv_mma", int(mma.nw*32), perSM, gridTokenTiles(mma.st.Blocks, rowsOf(x), 1), qkvMMAArgs{
			X: xt, WQ: accs[0], WK: accs[1], WV: accs[2], BQ: bAccs[0], BK: bAccs[1], BV: bAccs[2],
			R: rope, In: in, NQ: outs[0], NK: outs[1], NV: outs[2], KV: kv, NW: mma.nw, UPW: mma.upw,
			dotTail: dotTail{Rows: rowsOf(x), TT: 1, Smem: mma.st.Smem}}))
		return append(quant, ls...), err
	}
	ls, err := e.emit(c, "qkv_q8", passes.LinThreads, gridTokenTiles(blocks, rowsOf(x), tt), qkvQ8Args{
		WQ: accs[0].dotted(), WK: accs[1].dotted(), WV: accs[2].dotted(), BQ: bAccs[0], BK: bAccs[1], BV: bAccs[2],
		R: rope, In: in, NQ: outs[0], NK: outs[1], NV: outs[2], KV: kv, S: s,
		dotTail: dotTail{Early: e.fetchesEarly(x, blocks, false), Rows: rowsOf(x), TT: tt}})
	return append(quant, ls...), err
}

// storesKVOf is the attention whose k and v qkv node n's kernels store in
// its cache (qkv_stores_kv, the chooseQKNormFolds pass: parts 1 and 2 of
// n as they come out, roped or not), or nil; nil in a batched step, whose
// attentions store them in the paged pool.
func (e *emitter) storesKVOf(n *ir.Node) *ir.Node {
	if e.batching {
		return nil
	}
	for _, k := range e.users[n] {
		if k.Op != ir.OpView || k.Int("part") != 1 {
			continue
		}
		for _, a := range e.users[k] {
			if a.Op == ir.OpAttention && a.Inputs[1] == k && ir.QKVStoresKV(a) {
				return a
			}
		}
	}
	return nil
}

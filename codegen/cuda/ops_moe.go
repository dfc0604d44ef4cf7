package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// moeWarps is MOE_WARPS (moe.cu.tmpl): the rows one expert-GEMV block owns.
const moeWarps = passes.MoEWarps

// moeScratch is where the MoE keeps its per-step intermediates in codegen's
// scratch (arena offsets), for a step of up to maxTokens tokens, after the
// int16 form of x (the integer path's gate+up reads it after moe_logits):
//
//	sel  int32[MT·K]    slot t·K+k's expert
//	gw   f32[MT·K]      its softmax weight
//	cnt  int32[E]       prefill: slots per expert
//	list int32[E·MT]    prefill: each expert's slots
//	h    f32[MT·K, F]   the experts' SwiGLU outputs (prefill: f16, hh)
//	ys   f32[MT·K, D]   the experts' down projections, before weighting
//	xh   f16[MT, D]     prefill: x in f16 for the gate+up GEMM
//	hq   int16[K, F]    decode's h as int16 codes (integer path)
//	hs   float2[K, F/32] and their scales
//	logit f32[E]        decode's router logits (integer path)
//
// and, for a batched decode step on tensor cores (moeTokens), of up to
// P = min(MT, passes.BatchDecodeRows)·K slots in expert order:
//
//	act   int4[E+1]     how many experts the step routes to, then each
//	                    one's (expert, slots, first slot in that order)
//	order int32[P]      the slots in that order
//	xqOrd int16[P, D]   x's rows of the slots in that order, int16 codes
//	xsOrd float2[P, D/32] and their scales
//	hqOrd int16[P, F]   h's rows (in h, f32, in that order), int16 codes
//	hsOrd float2[P, F/32] and their scales
type moeScratch struct {
	sel, gw, cnt, list, h, ys, hq, hs, logit, xh plans.Arg
	act, order, xqOrd, xsOrd, hqOrd, hsOrd       plans.Arg
}

// moeScratchOf is moeScratchArgs for MoE node m.
func (e *emitter) moeScratchOf(m *ir.Node) moeScratch {
	x, wg := m.Inputs[0], ir.MoEInputs(m).Gate
	return e.moeScratchArgs(m.Int("experts"), m.Int("top_k"), x.Shape[len(x.Shape)-1], wg.Shape[1])
}

// moeScratchArgs lays out the MoE scratch, growing codegen's scratch to fit.
func (e *emitter) moeScratchArgs(experts, k, d, f int64) moeScratch {
	slots := e.maxTokens * k
	off := e.scratchBase + e.intScratchBytes(d)
	next := func(bytes int64) plans.Arg {
		a := plans.Arg{Kind: plans.ArgArena, Offset: off}
		off += alignUp(bytes, plans.Alignment)
		return a
	}
	s := moeScratch{sel: next(4 * slots), gw: next(4 * slots), cnt: next(4 * experts), list: next(4 * experts * e.maxTokens),
		h: next(4 * slots * f), ys: next(4 * slots * d), hq: next(2 * k * f), hs: next(8 * k * f / 32), logit: next(4 * experts),
		xh: next(2 * e.maxTokens * d)}
	ord := e.moeOrderSlots(k)
	s.act, s.order = next(16*(experts+1)), next(4*ord)
	s.xqOrd, s.xsOrd, s.hqOrd, s.hsOrd = next(2*ord*d), next(8*ord*d/32), next(2*ord*f), next(8*ord*f/32)
	e.scratchBytes = max(e.scratchBytes, off-e.scratchBase)
	return s
}

// moeOrderSlots is the most slots a step the MoE's tensor-core products
// over a few tokens (moeTokens) serve: top_k k of BatchDecodeRows tokens.
func (e *emitter) moeOrderSlots(k int64) int64 { return min(e.maxTokens, passes.BatchDecodeRows) * k }

// moeSplits is the S of the expert products' grid (tiles, S) (moe.cu.tmpl:
// block (x, y) takes tile x of the routed experts y, y + S, ...): blocks
// enough to hold 16 of them an SM, at most one an expert. A grid y of E had
// every tile's blocks of the experts no slot chose start and leave (a
// two-row step of gpt-oss routes to at most 8 of its 32 experts, of
// Qwen3-30B-A3B's to 16 of 128).
func (e *emitter) moeSplits(tiles, experts int64) int64 {
	return min(experts, ceilDiv(16*e.SMs, tiles))
}

// launches collects an op's launches in order; add appends l and passes
// err on, for "if err := ls.add(e.emit(...)); err != nil".
type launches []plans.Launch

func (ls *launches) add(l []plans.Launch, err error) error {
	*ls = append(*ls, l...)
	return err
}

// moeTakesIntDot reports whether moe node n runs on the integer path
// (moeDecodeQ8) in the schedule being emitted: a decode the chooseKernels
// pass gave q8. Prefill runs the expert GEMMs on tensor cores.
func (e *emitter) moeTakesIntDot(n *ir.Node) bool { return e.kernelOf(n) == ir.KernelQ8 }

// moeBias adds bias b (nil: the model has none) to c as parameter name and
// returns its accessor: B_none for an absent one.
func (e *emitter) moeBias(c *call, name string, b *ir.Node, want int64) (accessor, error) {
	if b == nil {
		c.null()
		return noWeight, nil
	}
	c.ptr(e, cWeight, name, b)
	return e.vectorAccessor(b, want)
}

// optPtr adds weight w as parameter name, or a null pointer where the model
// has no such tensor (an absent bias, read through B_none).
func optPtr(e *emitter, c *call, name string, w *ir.Node) {
	if w == nil {
		c.null()
		return
	}
	c.ptr(e, cWeight, name, w)
}

// expertPtrs adds an MoE's expert weights and biases to c: gate and up
// (wg, bg, wu, bu) or down (wd, bd).
func expertPtrs(e *emitter, c *call, mw ir.MoEWeights, gateUp bool) {
	if gateUp {
		c.ptr(e, cWeight, "wg", mw.Gate)
		optPtr(e, c, "bg", mw.GateBias)
		c.ptr(e, cWeight, "wu", mw.Up)
		optPtr(e, c, "bu", mw.UpBias)
		return
	}
	c.ptr(e, cWeight, "wd", mw.Down)
	optPtr(e, c, "bd", mw.DownBias)
}

// moe(x, wr [, br], wg [, bg], wu [, bu], wd [, bd]): route, (prefill)
// list each expert's tokens, gate+up with the experts' SwiGLU, down,
// weighted sum (a batched decode step on tensor cores: moeTokens); see
// moe.cu.tmpl. Expert matrices are [E, rows, cols]
// tensors read through one accessor over the whole tensor.
func (e *emitter) moe(n *ir.Node) ([]plans.Launch, error) {
	x := n.Inputs[0]
	d, err := activation(x)
	if err != nil {
		return nil, err
	}
	experts, k := n.Int("experts"), n.Int("top_k")
	if k < 1 || k > experts || experts > 128 {
		return nil, fmt.Errorf("experts %d, top_k %d: want 1 ≤ top_k ≤ experts ≤ 128", experts, k)
	}
	mw := ir.MoEInputs(n)
	wr, br := mw.Router, mw.RouterBias
	ra, rout, err := e.matrix(wr, d)
	if err != nil {
		return nil, err
	}
	if rout != experts {
		return nil, fmt.Errorf("router %q has %d rows, want %d experts", wr.Str("name"), rout, experts)
	}
	rba := noWeight
	if br != nil {
		if rba, err = e.vectorAccessor(br, experts); err != nil {
			return nil, err
		}
	}
	wg, wu, wd := mw.Gate, mw.Up, mw.Down
	if len(wg.Shape) != 3 || wg.Shape[0] != experts || wg.Shape[2] != d {
		return nil, fmt.Errorf("gate experts %q are %v, want [%d, F, %d]", wg.Str("name"), wg.Shape, experts, d)
	}
	f := wg.Shape[1]
	if d%32 != 0 || f%32 != 0 {
		return nil, fmt.Errorf("widths %d and %d must be multiples of 32 (whole weight groups)", d, f)
	}
	var accs [3]accessor // gate, up, down
	var biasAccs [3]accessor
	for i, want := range []ir.Shape{{experts, f, d}, {experts, f, d}, {experts, d, f}} {
		w, b := [3]*ir.Node{wg, wu, wd}[i], [3]*ir.Node{mw.GateBias, mw.UpBias, mw.DownBias}[i]
		if !want.Equal(w.Shape) {
			return nil, fmt.Errorf("expert weight %q is %v, want %v", w.Str("name"), w.Shape, want)
		}
		if accs[i], err = e.accessor(w); err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		if biasAccs[i], err = e.vectorAccessor(b, want[0]*want[1]); err != nil {
			return nil, err
		}
	}
	if accs[0] != accs[1] || biasAccs[0] != biasAccs[1] {
		return nil, fmt.Errorf("gate and up experts %q, %q differ in type (%s, %s)", wg.Str("name"), wu.Str("name"), accs[0], accs[1])
	}
	rows := rowsOf(x)
	if rows != 0 {
		return nil, fmt.Errorf("input is %v, want [T, %d]", x.Shape, d)
	}
	members := []string{fmt.Sprintf("static constexpr int E = %d, K = %d, D = %d, F = %d, MT = %d;", experts, k, d, f, e.maxTokens)}
	if n.Clamped() {
		members = append(members, fmt.Sprintf("static constexpr float LIMIT = %s, ALPHA = %s;", cFloat(n.Float("limit")), cFloat(n.Float("alpha"))))
	}
	cfg := e.kernels.config("Moe", members...)
	s := e.moeScratchOf(n)
	if e.moeTakesIntDot(n) {
		return e.moeDecodeQ8(n, cfg, s, ra, rba, accs[0].dotted(), biasAccs[0], accs[2].dotted(), biasAccs[2], d, f, experts)
	}
	var ls launches

	route := &call{}
	route.ptr(e, cWeight, "wr", wr)
	optPtr(e, route, "br", br)
	route.ptr(e, cIn, "x", x)
	route.arg("int* __restrict__", "sel", s.sel)
	route.arg(cOut, "gw", s.gw)
	if err := ls.add(e.emit(route, "moe_route", int(min(experts, 32))*32, gridRowsX(0), moeRouterArgs{Cfg: cfg, WR: ra, BR: rba})); err != nil {
		return nil, err
	}

	if e.kernelOf(n) == ir.KernelMMATokens {
		if err := ls.add(e.moeTokens(n, cfg, s, accs, biasAccs, d, f, experts)); err != nil {
			return nil, err
		}
		return ls.sum(e, n, cfg, s, d)
	}
	// Decode reads the routing directly (grid y = K slots of one token); a
	// prefill lists each expert's slots first (grid y = E).
	if e.prefill {
		l := &call{}
		l.arg(cInts, "sel", s.sel)
		l.arg("int* __restrict__", "cnt", s.cnt)
		l.arg("int* __restrict__", "list", s.list)
		e.stateArg(l)
		if err := ls.add(e.emit(l, "moe_lists", int(min(experts, 32))*32, gridFixed(1), configArgs{cfg})); err != nil {
			return nil, err
		}
	}
	if e.prefill {
		if err := ls.add(e.moeGEMMs(n, cfg, s, accs, biasAccs, d, f, experts)); err != nil {
			return nil, err
		}
	} else {
		xa, err := e.value(x)
		if err != nil {
			return nil, err
		}
		gemv := func(w0, b0, w1, b1 *ir.Node, in, out plans.Arg, acc, bacc accessor, inW, outW int64, gated bool) error {
			c := &call{}
			c.ptr(e, cWeight, "w0", w0)
			optPtr(e, c, "b0", b0)
			if gated {
				c.ptr(e, cWeight, "w1", w1)
				optPtr(e, c, "b1", b1)
			} else {
				c.null()
				c.null()
			}
			c.arg(cIn, "x", in)
			c.arg(cInts, "sel", s.sel)
			c.arg(cOut, "y", out)
			g := grid{b: [3]int64{ceilDiv(outW, moeWarps), k, 1}}
			return ls.add(e.emit(c, "moe_expert_gemv", moeWarps*32, g, moeExpertArgs{Cfg: cfg, W: acc, B: bacc, In: inW, Out: outW, Gated: gated}))
		}
		if err := gemv(wg, mw.GateBias, wu, mw.UpBias, xa, s.h, accs[0], biasAccs[0], d, f, true); err != nil {
			return nil, err
		}
		if err := gemv(wd, mw.DownBias, nil, nil, s.h, s.ys, accs[2], biasAccs[2], f, d, false); err != nil {
			return nil, err
		}
	}

	return ls.sum(e, n, cfg, s, d)
}

// sum appends moe_sum (the slots' rows weighted and added in order) to an
// MoE's launches ls and returns them.
func (ls launches) sum(e *emitter, n *ir.Node, cfg string, s moeScratch, d int64) ([]plans.Launch, error) {
	sum := &call{}
	sum.arg(cIn, "ys", s.ys)
	sum.arg(cIn, "gw", s.gw)
	sum.ptr(e, cOut, "y", n)
	e.stateArg(sum)
	if err := ls.add(e.emit(sum, "moe_sum", 256, gridElems(0, d, 256), configArgs{cfg})); err != nil {
		return nil, err
	}
	// The MoE scratch overlaps the int16 form of wider activations.
	e.scratchHolds = scratchNone
	return ls, nil
}

// moeTokens are the expert products of an MoE whose kernel in the schedule
// is mma_tokens (a batched decode step's few tokens; moe.cu.tmpl): the
// slots in expert order (moe_order), x's rows in that order as int16
// codes, per expert over its slots gate+up with the experts' SwiGLU into h
// (f32, expert order), h's codes, and down with its bias into ys; each
// routed expert's weights are read once for all its slots. Its scratch
// holds moeOrderSlots slots.
func (e *emitter) moeTokens(n *ir.Node, cfg string, s moeScratch, accs, biasAccs [3]accessor, d, f, experts int64) ([]plans.Launch, error) {
	if !e.batchDecode && e.maxTokens > passes.BatchDecodeRows {
		return nil, fmt.Errorf("the experts' mma_tokens products serve steps of at most %d tokens; the plan's %s takes %d", passes.BatchDecodeRows, e.scheduleName(), e.maxTokens)
	}
	var ls launches
	k, mw := n.Int("top_k"), ir.MoEInputs(n)
	order := &call{}
	order.arg(cInts, "sel", s.sel)
	order.arg("int4* __restrict__", "act", s.act)
	order.arg("int* __restrict__", "order", s.order)
	e.stateArg(order)
	if err := ls.add(e.emit(order, "moe_order", int(min(experts, 32))*32, gridFixed(1), configArgs{cfg})); err != nil {
		return nil, err
	}
	// codes quantizes rows [T·K, in] of src (gathered from x by the slots'
	// tokens) into xq, xs for weights of accessor w.
	codes := func(src, xq, xs plans.Arg, w accessor, in int64, gather bool) error {
		c := &call{}
		c.arg(cIn, "x", src)
		c.arg(cInts, "order", s.order)
		c.arg("xq_t* __restrict__", "xq", xq)
		c.arg("float2* __restrict__", "xs", xs)
		e.stateArg(c)
		return ls.add(e.emit(c, "moe_codes", 256, gridElems(0, k*in, 256), moeCodesArgs{Cfg: cfg, W: w, In: in, Gather: gather}))
	}
	xa, err := e.value(n.Inputs[0])
	if err != nil {
		return nil, err
	}
	if err := codes(xa, s.xqOrd, s.xsOrd, accs[0], d, true); err != nil {
		return nil, err
	}
	// product launches fn over the experts' slots: gate+up (gated; into h)
	// or down (into ys, through order), tiles weight tiles an expert.
	product := func(fn string, gated bool, xq, xs, y plans.Arg, w, b accessor, dt ir.DType, in, tiles int64) error {
		c := &call{}
		expertPtrs(e, c, mw, gated)
		c.arg(cXq, "xq", xq)
		c.arg(cScales, "xs", xs)
		c.arg("const int4* __restrict__", "act", s.act)
		if !gated {
			c.arg(cInts, "order", s.order)
		}
		c.arg(cOut, "y", y)
		nw := mmaTokensWarps(dt, in)
		g := grid{b: [3]int64{tiles, e.moeSplits(tiles, experts), 1}}
		return ls.add(e.emit(c, fn, int(nw*32), g, moeMMATArgs{Cfg: cfg, W: w, B: b, NW: nw, NT: e.mmaTokenTiles()}))
	}
	if err := product("moe_gate_up_mmat", true, s.xqOrd, s.xsOrd, s.h, accs[0], biasAccs[0], mw.Gate.DType, d, ceilDiv(f, 8)); err != nil {
		return nil, err
	}
	if err := codes(s.h, s.hqOrd, s.hsOrd, accs[2], f, false); err != nil {
		return nil, err
	}
	err = product("moe_down_mmat", false, s.hqOrd, s.hsOrd, s.ys, accs[2], biasAccs[2], mw.Down.DType, f, ceilDiv(d, 16))
	return ls, err
}

// moeGEMMs are a prefill MoE's expert products on tensor cores
// (moe_gemm.cu.tmpl): x to f16, then per expert over its listed slots gate+up
// with the experts' SwiGLU into h in f16, and down with its bias into ys,
// in the tiles the chooseMoETiles pass recorded.
func (e *emitter) moeGEMMs(n *ir.Node, cfg string, s moeScratch, accs, biasAccs [3]accessor, d, f, experts int64) ([]plans.Launch, error) {
	t, err := moeTilesOf(n)
	if err != nil {
		return nil, err
	}
	var ls launches
	if err := ls.add(e.xToF16(n.Inputs[0], d, s.xh)); err != nil {
		return nil, err
	}
	// The GEMMs' grid: column tiles × ceil(T/M) × the experts.
	tiles := func(cols int64) grid {
		g := gridTokenTiles(cols, 0, t.M)
		g.b[2] = experts
		return g
	}
	gemm := func(c *call, fn string, cols int64, w, b accessor) error {
		l, err := e.emitBounded(c, fn, gemmThreads, passes.MoEGEMMBlocks, tiles(cols), moeGEMMArgs{Cfg: cfg, W: w, B: b, BM: t.M, BN: t.N, Stages: t.Stages})
		if err == nil {
			l[0].Smem = int(passes.MoEGEMMSmem(t))
		}
		return ls.add(l, err)
	}
	hh := s.h // f16 here, half of the decode's f32 h
	mw := ir.MoEInputs(n)
	gateUp := &call{}
	expertPtrs(e, gateUp, mw, true)
	gateUp.arg("const __half* __restrict__", "xh", s.xh)
	gateUp.arg(cInts, "cnt", s.cnt)
	gateUp.arg(cInts, "list", s.list)
	gateUp.arg("__half* __restrict__", "hh", hh)
	if err := gemm(gateUp, "moe_gate_up_gemm", ceilDiv(2*f, t.N), accs[0], biasAccs[0]); err != nil {
		return nil, err
	}
	down := &call{}
	expertPtrs(e, down, mw, false)
	down.arg("const __half* __restrict__", "hh", hh)
	down.arg(cInts, "cnt", s.cnt)
	down.arg(cInts, "list", s.list)
	down.arg(cOut, "ys", s.ys)
	err = gemm(down, "moe_down_gemm", ceilDiv(d, t.N), accs[2], biasAccs[2])
	return ls, err
}

// moeTilesOf is MoE node n's GEMM tiles as the chooseMoETiles pass
// recorded them.
func moeTilesOf(n *ir.Node) (passes.MoETiles, error) {
	if _, ok := n.Attrs["moe_tile_m"]; !ok {
		return passes.MoETiles{}, fmt.Errorf("moe %%%d has no GEMM tiles (moe_tile_m, ...): the GPU passes choose them", n.ID)
	}
	return passes.MoETiles{M: n.Int("moe_tile_m"), N: n.Int("moe_tile_n"), Stages: n.Int("moe_stages")}, nil
}

// moeDownRowsOf is the down rows a row set takes (moe_down_rows) and the
// lanes a row (moe_down_lanes, 32 where not recorded) that the
// chooseMoETiles pass recorded on MoE n of width d, and the output rows a
// block of moe_down_sum_q8 then takes, checked: whole blocks of rows.
func moeDownRowsOf(n *ir.Node, d int64) (rows, lanes, block int64, err error) {
	if _, ok := n.Attrs["moe_down_rows"]; !ok {
		return 0, 0, 0, fmt.Errorf("moe %%%d has no moe_down_rows: the GPU passes choose it", n.ID)
	}
	r, k, l := n.Int("moe_down_rows"), n.Int("top_k"), int64(32)
	if _, ok := n.Attrs["moe_down_lanes"]; ok {
		l = n.Int("moe_down_lanes")
	}
	if moeWarps%k != 0 || l < 1 || 32%l != 0 || d%(moeWarps/k*r*(32/l)) != 0 {
		return 0, 0, 0, fmt.Errorf("moe %%%d: %d down rows a row set of %d lanes at top_k %d do not divide width %d into whole blocks", n.ID, r, l, k, d)
	}
	return r, l, moeWarps / k * r * (32 / l), nil
}

// moeDownLanesArg is moe_down_sum_q8's LPR argument: 0 (left out, the
// template's 32) for whole warps a row.
func moeDownLanesArg(lanes int64) int64 {
	if lanes == 32 {
		return 0
	}
	return lanes
}

// moeDecodeQ8 is a decode MoE on the integer path (moe.cu.tmpl): router
// logits (unless x's norm computed them: routerOf), gate+up with the SwiGLU
// and h's quantization, down with the weighted sum; both GEMV kernels pick
// the experts from the logits themselves. x comes quantized by its norm
// (else a quantize_x8 launch).
func (e *emitter) moeDecodeQ8(n *ir.Node, cfg string, s moeScratch, ra, rba, wa, ba, da, dba accessor, d, f, experts int64) ([]plans.Launch, error) {
	var ls launches
	x, mw := n.Inputs[0], ir.MoEInputs(n)
	if e.scratchHolds.routes != n {
		logits := &call{}
		logits.ptr(e, cWeight, "wr", mw.Router)
		optPtr(e, logits, "br", mw.RouterBias)
		logits.ptr(e, cIn, "x", x)
		logits.arg(cOut, "logit", s.logit)
		if err := ls.add(e.emit(logits, "moe_logits", passes.LinThreads, gridFixed(experts), moeRouterArgs{Cfg: cfg, WR: ra, BR: rba})); err != nil {
			return nil, err
		}
	}
	quant, xq, xs, err := e.quantizeX(x, d)
	if err := ls.add(quant, err); err != nil {
		return nil, err
	}
	gateUp := &call{}
	expertPtrs(e, gateUp, mw, true)
	gateUp.arg(cXq, "xq", xq)
	gateUp.arg(cScales, "xs", xs)
	gateUp.arg(cIn, "logit", s.logit)
	gateUp.arg("xq_t* __restrict__", "hq", s.hq)
	gateUp.arg("float2* __restrict__", "hs", s.hs)
	k := n.Int("top_k")
	r, lanes, o, err := moeDownRowsOf(n, d)
	if err != nil {
		return nil, err
	}
	if err := ls.add(e.emit(gateUp, "moe_gate_up_q8", moeWarps*32, grid{b: [3]int64{f / 32, k, 1}}, moeGateUpArgs{Cfg: cfg, W: wa, B: ba})); err != nil {
		return nil, err
	}
	down := &call{}
	expertPtrs(e, down, mw, false)
	down.arg(cXq, "hq", s.hq)
	down.arg(cScales, "hs", s.hs)
	down.arg(cIn, "logit", s.logit)
	down.ptr(e, cOut, "y", n)
	if err := ls.add(e.emit(down, "moe_down_sum_q8", moeWarps*32, gridFixed(d/o), moeDownArgs{Cfg: cfg, W: da, B: dba, Rows: r, Lanes: moeDownLanesArg(lanes)})); err != nil {
		return nil, err
	}
	// The scratch still holds x's int16 form (the MoE scratch starts past it).
	return ls, nil
}

// routerOf is the MoE node whose router logits decode RMSNorm n computes
// itself (rmsnorm_logits, moe.cu.tmpl), as the chooseKernels pass recorded
// it (router_logits), or nil; normed is n's normed row, which that MoE
// alone reads.
func (e *emitter) routerOf(n, normed *ir.Node) *ir.Node {
	if e.prefill || normed == nil || !n.Bool("router_logits") {
		return nil
	}
	return e.users[normed][0]
}

// normLogits emits rmsnorm_logits for a decode RMSNorm (call c holds its
// a, b, w and s; cfg is its config, wa its weight's accessor) whose normed
// row normed, cols wide, only MoE m reads: it writes the row's int16 form
// and m's router logits, and records both in scratchHolds.
func (e *emitter) normLogits(c *call, m, normed *ir.Node, cols int64, add bool, cfg string, wa accessor) ([]plans.Launch, error) {
	mw, experts := ir.MoEInputs(m), m.Int("experts")
	ra, err := e.vectorAccessor(mw.Router, experts*cols)
	if err != nil {
		return nil, err
	}
	c.ptr(e, cWeight, "wr", mw.Router)
	rba, err := e.moeBias(c, "br", mw.RouterBias, experts)
	if err != nil {
		return nil, err
	}
	e.writesInt16(c, normed, cols, 0, "xq", "xs")
	c.arg(cOut, "logit", e.moeScratchOf(m).logit)
	e.scratchHolds.routes = m
	threads := normThreads(cols)
	return e.emit(c, "rmsnorm_logits", threads, gridFixed(experts), normLogitsArgs{N: cfg, W: wa, WR: ra, BR: rba, D: cols, Threads: int64(threads), Add: add})
}

package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// call builds a kernel's parameters, its device call's arguments and the
// launch's arguments side by side.
type call struct {
	params     []param
	args       []string
	largs      []plans.Arg
	err        error
	startsLate bool // the kernel's instance.StartsLate
}

const (
	cWeight = "const uint8_t* __restrict__"
	cIn     = "const float* __restrict__"
	cOut    = "float* __restrict__"
	cInts   = "const int* __restrict__"
	cCache  = "__half* __restrict__"
	cXq     = "const xq_t* __restrict__"
	cScales = "const float2* __restrict__"
)

// ptr adds a pointer parameter for node n.
func (c *call) ptr(e *emitter, ctype, name string, n *ir.Node) {
	a, err := e.value(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	c.arg(ctype, name, a)
}

// arg adds a pointer parameter with a known launch argument.
func (c *call) arg(ctype, name string, a plans.Arg) {
	c.params = append(c.params, param{ctype, name})
	c.args = append(c.args, name)
	c.largs = append(c.largs, a)
}

// null passes nullptr to the device function (an absent optional input).
func (c *call) null() { c.args = append(c.args, "nullptr") }

// stateArg is the whole step-state block (kernels read T from it).
func (e *emitter) stateArg(c *call) { c.arg(cInts, "state", plans.Arg{Kind: plans.ArgState}) }

// emit registers the kernel (device template fn, its family's template
// arguments targs) and returns its one launch.
func (e *emitter) emit(c *call, fn string, threads int, g grid, targs any) ([]plans.Launch, error) {
	return e.emitBounded(c, fn, threads, 0, g, targs)
}

// emitBounded is emit for a kernel whose registers must let minBlocks
// blocks share an SM.
func (e *emitter) emitBounded(c *call, fn string, threads, minBlocks int, g grid, targs any) ([]plans.Launch, error) {
	if c.err != nil {
		return nil, c.err
	}
	k := &instance{Threads: threads, MinBlocks: minBlocks, StartsLate: c.startsLate, Params: c.params, Fn: fn, TArgs: targs, Args: c.args}
	return []plans.Launch{e.launch(k, g, c.largs...)}, nil
}

// matrix checks a weight [out, in] against the input width and returns its
// accessor and out.
func (e *emitter) matrix(w *ir.Node, in int64) (accessor, int64, error) {
	if len(w.Shape) != 2 || w.Shape[1] != in {
		return noWeight, 0, fmt.Errorf("weight %q is %v, want [out, %d]", w.Str("name"), w.Shape, in)
	}
	acc, err := e.accessor(w)
	return acc, w.Shape[0], err
}

// bias is the accessor of an optional bias input (B_none when absent) and
// adds its parameter.
func (e *emitter) bias(c *call, b *ir.Node, out int64, name string) accessor {
	if b == nil {
		c.null()
		return noWeight
	}
	acc, err := e.vectorAccessor(b, out)
	if err != nil && c.err == nil {
		c.err = err
	}
	c.ptr(e, cWeight, name, b)
	return acc
}

// linear(x, w [, b]): decode GEMV, grid (ceil(out/4), rows): 4 warps share 4 rows;
// a prefill takes gemm_linear (emitGEMM).
func (e *emitter) linear(n *ir.Node) ([]plans.Launch, error) {
	x := n.Inputs[0]
	in, err := activation(x)
	if err != nil {
		return nil, err
	}
	c := &call{}
	wa, ba, out, err := e.linearWeights(c, n, in)
	if err != nil {
		return nil, err
	}
	if e.takesGEMM(n) {
		return e.emitGEMM(c, n, in, out, "gemm_linear", func(bm, bn int64) any {
			return gemmLinearArgs{W: wa, B: ba, In: in, Out: out, BM: bm, BN: bn}
		})
	}
	g := gridRowsY(ceilDiv(out, 4), rowsOf(x))
	if !e.takesIntDot(n) {
		c.ptr(e, cIn, "x", x)
		c.ptr(e, cOut, "y", n)
		return e.emit(c, "linear_gemv", linThreads, g, linearGEMVArgs{W: wa, B: ba, In: in, Out: out})
	}
	s, blocks := e.linearQ8Blocks(n.Inputs[1].DType, in, out)
	stage := e.stagesX(x, in, blocks)
	if stage {
		c.startsLate = true
		c.ptr(e, cIn, "x", x)
	} else {
		c.null()
	}
	greedy := e.leavesGreedy(n, x)
	if greedy {
		e.headGreedy = true
	}
	y, residual := n, (*ir.Node)(nil)
	if sum, r := e.sumWriter(n); sum != nil {
		y, residual = sum, r
	}
	outs := func(c *call) {
		if greedy {
			c.arg("u64* __restrict__", "greedy", plans.Arg{Kind: plans.ArgState, Offset: e.state.Greedy})
		} else {
			c.null()
		}
		if residual != nil {
			c.ptr(e, cIn, "r", residual)
		} else {
			c.null()
		}
	}
	oneGroup := intDot[n.Inputs[1].DType] == 32 && in/32 <= s
	da := wa.dotted()
	// dot8_q6_k's BOUNDED form where registers must let a staged grid's
	// blocks share the SMs.
	da.bounded = e.residentBound(stage, blocks) > 0 && n.Inputs[1].DType == ir.Q6_K
	return e.intDot(c, y, x, in, "linear_q8", linThreads, blocks, stream{}, stage, oneGroup, outs, func(t dotTail) any {
		return linearQ8Args{W: da, B: ba, In: in, Out: out, S: s, QX: stage, Greedy: greedy, Res: resReadOf(residual != nil), dotTail: t}
	})
}

// leavesGreedy reports whether linear n over x is the LM head of one token
// (the graph's output, the logits of one row), which then leaves the step's
// greedy pick in the state block (linear_q8's GREEDY): a greedy step needs
// no sampler launch after the graph (Qwen2.5-0.5B 0.526 → 0.505 ms a step,
// KERNELS.md, eleventh session).
func (e *emitter) leavesGreedy(n, x *ir.Node) bool {
	return n == e.output && rowsOf(x) == 1
}

// Limits of linear_q8 quantizing its own input (stagesX): the int16 row and
// its scales in static shared memory (48 KiB at most), and a grid of at most
// three blocks per SM (stagedXBlocks), resident at once, so that the
// redundant quantization costs one block's time. GPT-2's Q4_0 down
// projection after its GELU (3072 → 768: 96 blocks, 7 KiB) stages, and
// Phi-3's after its SwiGLU (8192 → 3072: 384 blocks, 18 KiB), whose decode
// step staging took 1 % less than after a quantize_x8 launch (H200,
// KERNELS.md, thirteenth session).
const stagedXBytes = 40 << 10

// stagedXBlocks is the largest grid of a linear_q8 that stages x: three
// blocks an SM.
func (t tuning) stagedXBlocks() int64 { return 3 * t.SMs }

// stagesX reports whether the integer linear over x [rows, in] in blocks
// blocks quantizes x itself, in shared memory (q8.cu.tmpl, rows_dot8 with
// QX), instead of after a quantize_x8 launch: x's producer did not quantize
// it (an element-wise GELU, or a swiglu_q8 whose blocks hold no whole
// 32-group), a block serves one token, and the limits above hold.
func (e *emitter) stagesX(x *ir.Node, in, blocks int64) bool {
	if e.tokenTile(x) != 1 || in*2+in/32*8 > stagedXBytes || blocks > e.stagedXBlocks() {
		return false
	}
	held, err := e.scratchHoldsX(x)
	return err == nil && !held
}

// intDot emits an integer-path kernel fn (its weight and bias parameters
// already in c) after the launch quantizing x, unless the kernel stages x
// itself: it adds the int16 activations (nullptrs when staged), the value
// y it writes (its node's, or an add's sum: sumWriter), what outs adds
// after it (unless nil), and the state, and takes its template arguments
// from targs given their common tail: EARLY (fetchesEarly), rows and token
// tile, and the stream's shared memory for a kernel that streams (st.smem >
// 0). blocksX blocks of threads cover the output columns, or st.blocks
// stream them.
func (e *emitter) intDot(c *call, y, x *ir.Node, in int64, fn string, threads, blocksX int64, st stream, staged, oneGroup bool, outs func(*call), targs func(dotTail) any) ([]plans.Launch, error) {
	var quant []plans.Launch
	if staged {
		c.null()
		c.null()
	} else {
		var err error
		if quant, err = e.quantizedX(c, x, in); err != nil {
			return nil, err
		}
	}
	c.ptr(e, cOut, "y", y)
	if outs != nil {
		outs(c)
	}
	e.stateArg(c)
	tt := e.tokenTile(x)
	// A streaming kernel copies its first chunk before the wait instead of
	// fetching early. A staged one would hold the first groups' registers
	// across quantize_row, which costs stagesX's blocks residency: Phi-3's
	// Q6_K down 73 → 166 registers (nvcc 11.8), one block an SM instead of
	// three; without the early fetch its decode step took 1 % less
	// (KERNELS.md, fifteenth session).
	early := false
	if st.smem > 0 {
		blocksX = st.blocks
	} else if !staged {
		early = e.fetchesEarly(x, blocksX, oneGroup)
	}
	tail := dotTail{Early: early, Rows: rowsOf(x), TT: tt, Smem: st.smem}
	ls, err := st.launch(e.emitBounded(c, fn, int(threads), e.residentBound(staged, blocksX), gridTokenTiles(blocksX, rowsOf(x), tt), targs(tail)))
	return append(quant, ls...), err
}

// residentBound is the blocks an SM that a grid of blocksX blocks, staged
// if it quantizes x itself, must fit at once (its __launch_bounds__
// minimum), or 0. A staged grid is resident at once (stagesX) only where
// registers let its blocks share the SMs, which nothing held them to: the
// shorter dot8_q6_k took Phi-3's Q6_K down, 384 blocks, to 88 registers
// (nvcc 13), two blocks an SM, two waves: 12.6 → 15.3 µs (H100, KERNELS.md,
// eighteenth session).
func (t tuning) residentBound(staged bool, blocksX int64) int {
	if perSM := ceilDiv(blocksX, t.SMs); staged && perSM > 1 {
		return int(perSM)
	}
	return 0
}

// earlyFetchBlocks is the largest integer-path grid that fetches its first
// weight groups before waiting for the grid before it (rows_dot8's EARLY):
// 5 blocks of 256 threads per SM. Such
// launches (Qwen2.5-0.5B's qkv, o-proj, swiglu and down: 28-304 blocks;
// gpt-oss's qkv, 640, and Phi-3's, 576) sit near the launch-latency floor,
// where the DRAM round trip saved counts: 4 blocks an SM left gpt-oss's qkv
// out, and taking it in made gpt-oss-20b's decode 2 % faster (KERNELS.md,
// fifth session). Larger ones are bandwidth-bound, and the registers holding
// the first groups across the wait (ptxas, sm_90: a Q6_K LM head 77 → 128)
// would cost them occupancy; except where a lane's share of each row is
// one 32-element group (oneGroup: Qwen2.5-0.5B's Q8_0 head, 28 groups a
// row): the first fetch is all of it, 48 → 64 registers (nvcc 11.8), and the
// early fetch made that head's decode step 1.9 % faster on an H200, where
// Phi-3's Q6_K head (48 groups of 64, 78 → 128) lost 0.9 % (KERNELS.md,
// thirteenth session).
func (t tuning) earlyFetchBlocks() int64 { return 5 * t.SMs }

// fetchesEarly is the EARLY template argument of an integer-path kernel
// over x with blocksX blocks a token tile; oneGroup: each lane fetches one
// 32-element group of each row in all.
func (e *emitter) fetchesEarly(x *ir.Node, blocksX int64, oneGroup bool) bool {
	return e.tokenTile(x) == 1 && (oneGroup || blocksX*max(1, rowsOf(x)) <= e.earlyFetchBlocks())
}

// prefillTile is how many tokens one block of the integer-path kernels
// serves in a prefill: each weight group fetched is used that many times.
const prefillTile = 8

// tokenTile is the tokens per block for x's rows in the schedule being
// emitted: prefillTile in a prefill, 1 in decode or for fixed-row inputs.
func (e *emitter) tokenTile(x *ir.Node) int64 {
	if e.prefill && rowsOf(x) == 0 {
		return prefillTile
	}
	return 1
}

// gridTokenTiles is (x, ceil(rows/tt), 1); rows 0 means T.
func gridTokenTiles(x, rows, tt int64) grid {
	if rows > 0 {
		return grid{b: [3]int64{x, ceilDiv(rows, tt), 1}}
	}
	return grid{a: [3]int64{0, 1, 0}, b: [3]int64{x, 0, 1}, div: [3]int64{0, tt, 0}}
}

// quantizedX emits the launch quantizing x (none when its producer did) and
// adds the int16 activations and their scales to c.
func (e *emitter) quantizedX(c *call, x *ir.Node, in int64) ([]plans.Launch, error) {
	quant, xq, xs, err := e.quantizeX(x, in)
	c.arg(cXq, "xq", xq)
	c.arg(cScales, "xs", xs)
	return quant, err
}

// intDot are the weight dtypes with an integer dot (q8.cu.tmpl), by their
// accessors' GROUP: their matrix kernels read activations quantized to int16.
var intDot = map[ir.DType]int64{ir.Q4_0: 32, ir.Q5_0: 32, ir.Q8_0: 32, ir.MXFP4: 32, ir.Q4_K: 64, ir.Q5_K: 64, ir.Q6_K: 64}

// intLanes is the lane-set size S of the integer-path kernels for rows of
// in elements of dtype dt (q8.cu.tmpl, rows_dot8), and the sets per block:
// the smallest power of two ≥ the row's groups, from a warp to the whole
// block, or a narrower set that leaves fewer lanes idle (a lane takes
// groups j, j + S, ...) where out rows, 4 a set, still make manyWaves of
// blocks: gpt-oss's 90-group Q8_0 rows kept 38 of 128 lanes idle. Widening
// the sets of small decode launches to give every SM a block was measured
// no faster (KERNELS.md). Last, the row's groups rounded up to whole
// 16-lane segments where that fits more sets in a block and the busiest
// SM's rows (rowsPerSM) do not grow: Phi-3's qkv (48-group rows, 9216 of
// them), five sets of 48 lanes instead of four of 64, took 1.9 % off its
// decode step on an H200 (none on an H100); its SwiGLU, o-proj and head,
// whose busiest SMs took 4-25 % more rows that way, lost up to 2.6 % on an
// H100 (KERNELS.md, fifteenth session).
func (t tuning) intLanes(dt ir.DType, in, out int64) (s, sets int64) {
	groups := in / intDot[dt]
	for s = 32; s < linThreads && s < groups; s *= 2 {
	}
	idle := func(s int64) int64 { return ceilDiv(groups, s)*s - groups }
	for n := s / 2; n >= 32; n /= 2 {
		if idle(n) < idle(s) && ceilDiv(out, 4*linThreads/n) >= t.manyWaves() {
			s = n
		}
	}
	if n := max(ceilDiv(groups, 16)*16, 32); n < s && linThreads/n > linThreads/s && t.rowsPerSM(out, linThreads/n) <= t.rowsPerSM(out, linThreads/s) {
		s = n
	}
	return s, linThreads / s
}

// rowsPerSM is the rows of the SM with the most blocks when out rows go 4
// a set in blocks of sets sets.
func (t tuning) rowsPerSM(out, sets int64) int64 {
	return ceilDiv(ceilDiv(out, 4*sets), t.SMs) * 4 * sets
}

// linearQ8Blocks is linear_q8's lane-set size and blocks for an [out, in]
// matrix of dtype dt: each set owns 4 rows (LIN_ROWS).
func (t tuning) linearQ8Blocks(dt ir.DType, in, out int64) (s, blocks int64) {
	s, sets := t.intLanes(dt, in, out)
	return s, ceilDiv(out, 4*sets)
}

// manyWaves is the grid (8 blocks an SM) past which a kernel's last,
// partial wave of blocks costs little.
func (t tuning) manyWaves() int64 { return 8 * t.SMs }

// takesIntDot reports whether matrix node n (linear, swiglu_linear, qkv)
// runs on the integer path: weights with an integer dot, a row length of
// whole 32-groups, for swiglu_linear one accessor for gate and up, for qkv
// one group size for q, k and v (one lane-set size serves them all).
func (e *emitter) takesIntDot(n *ir.Node) bool {
	if n.Op != ir.OpLinear && n.Op != ir.OpSwiGLULinear && n.Op != ir.OpQKV {
		return false
	}
	if intDot[n.Inputs[1].DType] == 0 || n.Inputs[0].Shape[len(n.Inputs[0].Shape)-1]%32 != 0 {
		return false
	}
	switch n.Op {
	case ir.OpLinear:
		return true
	case ir.OpSwiGLULinear:
		if len(n.Inputs) == 3 {
			ga, err1 := e.accessor(n.Inputs[1])
			ua, err2 := e.accessor(n.Inputs[2])
			return err1 == nil && err2 == nil && ga == ua
		}
		return true
	case ir.OpQKV:
		g := intDot[n.Inputs[1].DType]
		return intDot[n.Inputs[2].DType] == g && intDot[n.Inputs[3].DType] == g
	}
	return true
}

// feedsIntDot reports whether value v is the input x of an integer-path
// matrix node or MoE (directly, or through a last row that is x itself), so
// its producer should quantize it as it writes it.
func (e *emitter) feedsIntDot(v *ir.Node) bool {
	for _, u := range e.users[v] {
		if u.Inputs[0] == v && (e.takesIntDot(u) && !e.takesGEMM(u) || u.Op == ir.OpMoE && e.moeTakesIntDot(u) ||
			u.Op == ir.OpLast && e.lastIsRow(u) && e.feedsIntDot(u)) {
			return true
		}
	}
	return false
}

// scratchArgs returns the int16 scratch's arguments for activations of
// width in, past bytes after the scratch's start, growing the scratch to
// fit them.
func (e *emitter) scratchArgs(in, past int64) (xq, xs plans.Arg) {
	base := e.scratchBase + past
	e.scratchBytes = max(e.scratchBytes, past+e.intScratchBytes(in))
	return plans.Arg{Kind: plans.ArgArena, Offset: base}, plans.Arg{Kind: plans.ArgArena, Offset: base + alignUp(e.maxTokens*in*2, plans.Alignment)}
}

// intScratchBytes is the size of scratchArgs' int16 activations of width in
// and their scales.
func (e *emitter) intScratchBytes(in int64) int64 {
	return alignUp(e.maxTokens*in*2, plans.Alignment) + alignUp(e.maxTokens*in/32*8, plans.Alignment)
}

// scratchX is the int16 form of an activation in the scratch: the arena
// offset of the value (-1: none) and its codes' and scales' arguments;
// routes is the MoE whose router logits the value's norm wrote with them
// (routerOf), if any.
type scratchX struct {
	of     int64
	xq, xs plans.Arg
	routes *ir.Node
}

var scratchNone = scratchX{of: -1}

// quantizes adds a producer's int16 outputs for value v (its arena argument
// out, width cols) when v feeds the integer path, else nullptrs; it returns
// the Q8 template argument.
func (e *emitter) quantizes(c *call, v *ir.Node, out plans.Arg, cols int64) bool {
	if !e.wantsInt16(v, cols) {
		c.null()
		c.null()
		return false
	}
	e.writesInt16(c, out, cols, 0, "xq", "xs")
	return true
}

// wantsInt16 reports whether the producer of v (width cols) should write
// its int16 form: it feeds the integer path and is whole 32-groups.
func (e *emitter) wantsInt16(v *ir.Node, cols int64) bool { return cols%32 == 0 && e.feedsIntDot(v) }

// writesInt16 adds the int16 outputs (parameters q and s) for the value at
// out (width cols), past bytes into the scratch (after the int16 input the
// producer itself reads), and records that the scratch holds them.
func (e *emitter) writesInt16(c *call, out plans.Arg, cols, past int64, q, s string) {
	xq, xs := e.scratchArgs(cols, past)
	c.arg("xq_t* __restrict__", q, xq)
	c.arg("float2* __restrict__", s, xs)
	e.scratchHolds = scratchX{of: out.Offset, xq: xq, xs: xs}
}

// quantizeX emits the launch quantizing x [rows, in] to int16 in the scratch
// after the planned arena, unless the scratch already holds x (its producer
// quantized it and nothing has overwritten it since), and returns the
// scratch arguments.
func (e *emitter) quantizeX(x *ir.Node, in int64) ([]plans.Launch, plans.Arg, plans.Arg, error) {
	held, err := e.scratchHoldsX(x)
	if err != nil || held {
		return nil, e.scratchHolds.xq, e.scratchHolds.xs, err
	}
	xq, xs := e.scratchArgs(in, 0)
	xa, _ := e.value(x)
	e.scratchHolds = scratchX{of: xa.Offset, xq: xq, xs: xs}
	ls, err := e.quantizeLaunch(xa, xq, xs, rowsOf(x), in)
	return ls, xq, xs, err
}

// quantizeLaunch is the quantize_x8 launch of the activation at xa [rows,
// in] (rows 0: T) into the int16 codes xq and scales xs.
func (e *emitter) quantizeLaunch(xa, xq, xs plans.Arg, rows, in int64) ([]plans.Launch, error) {
	c := &call{}
	c.arg(cIn, "x", xa)
	c.arg("xq_t* __restrict__", "xq", xq)
	c.arg("float2* __restrict__", "xs", xs)
	e.stateArg(c)
	return e.emit(c, "quantize_x8", 256, gridElems(rows, in, 256), quantizeArgs{Rows: rows, In: in})
}

// scratchHoldsX reports whether the int16 scratch holds x: its producer
// quantized it and nothing has overwritten the scratch since.
func (e *emitter) scratchHoldsX(x *ir.Node) (bool, error) {
	xa, err := e.value(x)
	return err == nil && xa.Kind == plans.ArgArena && xa.Offset == e.scratchHolds.of, err
}

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
	if e.takesGEMM(n) {
		return e.gemmQKV(c, n, in, q, bAccs)
	}
	intPath := e.takesIntDot(n)
	var mma mmaShape
	if intPath {
		mma = e.qkvMMA(n, x, in, q)
	}
	var quant []plans.Launch
	var xt mmaX
	switch {
	case mma.ok:
		if quant, xt, err = e.mmaInput(c, x, in); err != nil {
			return nil, err
		}
	case intPath:
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
	if att := e.attentionOf(n); att != nil && rowsOf(x) == 0 && outs[1] == att.Int("kv_heads")*att.Int("head_dim") && outs[2] == outs[1] {
		kc, vc := kvArgs(att)
		c.arg(cCache, "kc", kc)
		c.arg(cCache, "vc", vc)
		e.kvStored[att] = true
		kv = true
	} else {
		c.null()
		c.null()
	}
	e.stateArg(c)
	if !intPath {
		pairs := (outs[0] + outs[1] + outs[2]) / 2
		return e.emit(c, "qkv_gemv", 128, gridRowsY(ceilDiv(pairs, 4), rowsOf(x)), qkvGEMVArgs{
			WQ: accs[0], WK: accs[1], WV: accs[2], BQ: bAccs[0], BK: bAccs[1], BV: bAccs[2],
			R: rope, In: in, NQ: outs[0], NK: outs[1], NV: outs[2], KV: kv})
	}
	// Blocks of 2·sets rotation pairs, each within one part (qkv_q8).
	s, sets := e.intLanes(n.Inputs[1].DType, in, outs[0]+outs[1]+outs[2])
	var blocks int64
	for _, o := range outs {
		blocks += ceilDiv(o/2, 2*sets)
	}
	tt := e.tokenTile(x)
	if mma.ok {
		c.startsLate = true
		ls, err := mma.st.launch(e.emit(c, "qkv_mma", int(mma.nw*32), gridTokenTiles(mma.st.blocks, rowsOf(x), 1), qkvMMAArgs{
			X: xt, W: accs[0], BQ: bAccs[0], BK: bAccs[1], BV: bAccs[2],
			R: rope, In: in, NQ: outs[0], NK: outs[1], NV: outs[2], KV: kv, NW: mma.nw, UPW: mma.upw,
			dotTail: dotTail{Rows: rowsOf(x), TT: 1, Smem: mma.st.smem}}))
		return append(quant, ls...), err
	}
	ls, err := e.emit(c, "qkv_q8", linThreads, gridTokenTiles(blocks, rowsOf(x), tt), qkvQ8Args{
		WQ: accs[0].dotted(), WK: accs[1].dotted(), WV: accs[2].dotted(), BQ: bAccs[0], BK: bAccs[1], BV: bAccs[2],
		R: rope, In: in, NQ: outs[0], NK: outs[1], NV: outs[2], KV: kv, S: s,
		dotTail: dotTail{Early: e.fetchesEarly(x, blocks, false), Rows: rowsOf(x), TT: tt}})
	return append(quant, ls...), err
}

// mmaShape is how a tensor-core kernel (mma.cu.tmpl) runs, where ok: its
// warps, the super-blocks a warp, and its stream.
type mmaShape struct {
	nw, upw int64
	st      stream
	ok      bool
}

// qkvMMA is where qkv n over x takes qkv_mma (mma.cu.tmpl): one token, q,
// k and v in one layout with MmaCodes (one accessor, so v has k's rows:
// whole heads), NeoX rotation of whole heads of a multiple of 16 dims, and
// stages that fit.
func (e *emitter) qkvMMA(n, x *ir.Node, in int64, q qkvParts) mmaShape {
	hd, rot := n.Int("head_dim"), n.Int("rot_dim")
	nw, upw, ok := mmaWarps(q.accs[0], q.accs[1], in)
	if !ok || q.accs[1] != q.accs[2] || n.Str("rope_mode") != "neox" || (rot != 0 && rot != hd) || hd%16 != 0 {
		return mmaShape{}
	}
	st := e.mmaStreams(x, q.accs[0], in, (q.outs[0]+q.outs[1]+q.outs[2])/16, 2, 8) // chunks of 8 pairs
	return mmaShape{nw, upw, st, st.smem > 0}
}

// attentionOf is the attention whose k and v are parts 1 and 2 of qkv node
// n as they come out (roped or not), or nil.
func (e *emitter) attentionOf(n *ir.Node) *ir.Node {
	for _, k := range e.users[n] {
		if k.Op != ir.OpView || k.Int("part") != 1 {
			continue
		}
		for _, a := range e.users[k] {
			if a.Op == ir.OpAttention && a.Inputs[1] == k && a.Inputs[2].Op == ir.OpView &&
				a.Inputs[2].Inputs[0] == n && a.Inputs[2].Int("part") == 2 {
				return a
			}
		}
	}
	return nil
}

// swiglu_linear(x, wg, wu) or (x, wgu [2F, in]): gate and up rows of one
// output column per warp, SiLU product epilogue; a prefill takes gemm_swiglu
// (emitGEMM).
func (e *emitter) swigluLinear(n *ir.Node) ([]plans.Launch, error) {
	x := n.Inputs[0]
	in, err := activation(x)
	if err != nil {
		return nil, err
	}
	c := &call{}
	ga, ua, f, upRow0, err := e.swigluWeights(c, n, in)
	if err != nil {
		return nil, err
	}
	if e.takesGEMM(n) {
		return e.emitGEMM(c, n, in, 2*f, "gemm_swiglu", func(bm, bn int64) any {
			return gemmSwiGLUArgs{WG: ga, WU: ua, In: in, F: f, UpRow0: upRow0, BM: bm, BN: bn}
		})
	}
	if !e.takesIntDot(n) {
		c.ptr(e, cIn, "x", x)
		c.ptr(e, cOut, "y", n)
		return e.emit(c, "swiglu_gemv", 128, gridRowsY(ceilDiv(f, 4), rowsOf(x)), swigluGEMVArgs{WG: ga, WU: ua, In: in, F: f, UpRow0: upRow0})
	}
	if mma := e.swigluMMA(n, x, in, ga, ua, f); mma.ok {
		quant, xt, err := e.mmaInput(c, x, in)
		if err != nil {
			return nil, err
		}
		c.ptr(e, cOut, "y", n)
		e.stateArg(c)
		c.startsLate = true
		ls, err := mma.st.launch(e.emit(c, "swiglu_mma", int(mma.nw*32), gridTokenTiles(mma.st.blocks, rowsOf(x), 1), swigluMMAArgs{
			X: xt, W: ga, In: in, F: f, UpRow0: upRow0, NW: mma.nw, UPW: mma.upw,
			dotTail: dotTail{Rows: rowsOf(x), TT: 1, Smem: mma.st.smem}}))
		return append(quant, ls...), err
	}
	s, q8 := e.swigluLanes(n, x, in, f)
	sets, threads := linThreads/s, int64(linThreads)
	if q8 {
		sets, threads = swigluQ8Sets, swigluQ8Sets*s
	}
	out, err := e.value(n)
	if err != nil {
		return nil, err
	}
	outs := func(c *call) {
		if q8 {
			e.writesInt16(c, out, f, e.intScratchBytes(in), "yq", "ys") // past x's int16 form, which the kernel reads
		} else {
			c.null()
			c.null()
		}
	}
	blocks := ceilDiv(f, 2*sets)
	var st stream
	// stream_rows serves blocks of LIN_WARPS warps (q8's have 16 sets) whose
	// lanes take one group of each row: their activations, loaded once, are
	// what made streaming pay (KERNELS.md, fourteenth session).
	if !q8 && in/intDot[n.Inputs[1].DType] <= s {
		st = e.streams(x, ga, in, blocks, 2, 2*sets)
	}
	return e.intDot(c, n, x, in, "swiglu_q8", threads, blocks, st, false, false, outs, func(t dotTail) any {
		return swigluQ8Args{W: ga.dotted(), In: in, F: f, UpRow0: upRow0, S: s, Warps: threads / 32, Q8: q8, dotTail: t}
	})
}

// swigluLanes is swiglu_q8's lane-set size for swiglu_linear n over x
// [.., in] with F = f, and whether it quantizes its output (q8): where it
// feeds the integer path, one token a block, in at most maxSwigluThreads.
func (e *emitter) swigluLanes(n, x *ir.Node, in, f int64) (s int64, q8 bool) {
	s, _ = e.intLanes(n.Inputs[1].DType, in, 2*f)
	return s, e.tokenTile(x) == 1 && e.wantsInt16(n, f) && swigluQ8Sets*s <= maxSwigluThreads
}

// swigluMMA is where swiglu_linear n over x (gate and up accessors ga, ua)
// takes swiglu_mma: rows with MmaCodes (Q4_K, Q5_K split) that stream, in
// chunks of mmaChunk columns, unless its output is quantized for the
// integer path (swiglu_q8's Q8).
func (e *emitter) swigluMMA(n, x *ir.Node, in int64, ga, ua accessor, f int64) mmaShape {
	nw, upw, ok := mmaWarps(ga, ua, in)
	if _, q8 := e.swigluLanes(n, x, in, f); !ok || q8 {
		return mmaShape{}
	}
	st := e.streams(x, ga, in, ceilDiv(f, mmaChunk), 2, mmaChunk)
	return mmaShape{nw, upw, st, st.smem > 0}
}

// mmaChunk is swiglu_mma's chunk (mma.cu.tmpl): 8 columns, whose gate and
// up rows are one m16n8k32 tile's 16.
const mmaChunk = 8

// mmaWarps reports whether weights with accessors ga, ua over rows of in
// take the tensor-core kernels (swiglu_mma, qkv_mma): one layout with
// MmaCodes, whole super-blocks that at most 8 warps share alike, at most 3
// a warp (their activations' B words stay in registers); and the warps and
// super-blocks a warp, the fewest a warp.
func mmaWarps(ga, ua accessor, in int64) (nw, upw int64, ok bool) {
	if ga != ua || !mmaLayout(ga) || in%256 != 0 {
		return 0, 0, false
	}
	for nb, upw := in/256, int64(1); upw <= 3; upw++ {
		if nb%upw == 0 && nb/upw <= 8 {
			return nb / upw, upw, true
		}
	}
	return 0, 0, false
}

// mmaLayout reports whether accessor acc has MmaCodes (mma.cu.tmpl).
func mmaLayout(acc accessor) bool {
	return acc.dtype == ir.Q4_K && !acc.split || acc.dtype == ir.Q5_K && acc.split
}

// A swiglu_q8 that quantizes its output has swigluQ8Sets lane sets of two
// columns, so that a block's columns are one 32-group, and so S·16 threads:
// Qwen2.5-0.5B's (S = 32) 512. Sets of 4 columns in blocks of 256 threads
// (half the blocks, each thread twice the rows) made its decode 3 % slower,
// and Phi-3-mini's (S 64 → 32, 2 groups a lane) 7 %; Phi-3-mini's S = 64
// in 1024 threads (64 registers a thread, spills) 28 % (KERNELS.md).
const (
	swigluQ8Sets     = 16
	maxSwigluThreads = 512
)

// linThreads is the block of linear_gemv, linear_q8 and a swiglu_q8 that
// does not quantize its output: LIN_WARPS (gemv.cu.tmpl) warps.
const linThreads = 8 * 32

// swigluWeights checks swiglu_linear n's gate and up weights — separate
// (x, wg, wu) or packed (x, wgu [2F, in]) — against the input width in,
// adds their parameters to c, and returns their accessors, F, and the row
// where up starts in the tensor wu points at (F when packed, else 0).
func (e *emitter) swigluWeights(c *call, n *ir.Node, in int64) (ga, ua accessor, f, upRow0 int64, err error) {
	f = n.Shape[len(n.Shape)-1]
	ga, gout, err := e.matrix(n.Inputs[1], in)
	if err != nil {
		return noWeight, noWeight, 0, 0, err
	}
	c.ptr(e, cWeight, "wg", n.Inputs[1])
	if len(n.Inputs) == 2 {
		if gout != 2*f {
			return noWeight, noWeight, 0, 0, fmt.Errorf("packed gate+up has %d rows, want %d", gout, 2*f)
		}
		c.args = append(c.args, "wg")
		return ga, ga, f, f, nil
	}
	ua, uout, err := e.matrix(n.Inputs[2], in)
	if err != nil {
		return noWeight, noWeight, 0, 0, err
	}
	if gout != f || uout != f {
		return noWeight, noWeight, 0, 0, fmt.Errorf("gate and up have %d and %d rows, want %d", gout, uout, f)
	}
	c.ptr(e, cWeight, "wu", n.Inputs[2])
	return ga, ua, f, 0, nil
}

// linearWeights checks linear n's weight [out, in] and optional bias, adds
// their parameters to c, and returns their accessors and out.
func (e *emitter) linearWeights(c *call, n *ir.Node, in int64) (wa, ba accessor, out int64, err error) {
	w := n.Inputs[1]
	if wa, out, err = e.matrix(w, in); err != nil {
		return noWeight, noWeight, 0, err
	}
	c.ptr(e, cWeight, "w", w)
	var b *ir.Node
	if len(n.Inputs) == 3 {
		b = n.Inputs[2]
	}
	return wa, e.bias(c, b, out, "b"), out, nil
}

package cuda

import (
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

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

// intDot are the weight dtypes with an integer dot (q8_dot.cu.tmpl), by their
// accessors' GROUP: their matrix kernels read activations quantized to int16.
var intDot = map[ir.DType]int64{ir.Q4_0: 32, ir.Q5_0: 32, ir.Q8_0: 32, ir.MXFP4: 32, ir.Q4_K: 64, ir.Q5_K: 64, ir.Q6_K: 64}

// intLanes is the lane-set size S of the integer-path kernels for rows of
// in elements of dtype dt (q8_rows.cu.tmpl, rows_dot8), and the sets per block:
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

// linThreads is the block of linear_gemv, linear_q8 and a swiglu_q8 that
// does not quantize its output: LIN_WARPS (gemv.cu.tmpl) warps.
const linThreads = 8 * 32

package cuda

import (
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
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
func (e *emitter) intDot(c *call, y, x *ir.Node, in int64, fn string, threads, blocksX int64, st passes.Stream, staged, oneGroup bool, outs func(*call), targs func(dotTail) any) ([]plans.Launch, error) {
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
	// three; without the early fetch its decode step took 1 % less.
	early := false
	if st.Smem > 0 {
		blocksX = st.Blocks
	} else if !staged {
		early = e.fetchesEarly(x, blocksX, oneGroup)
	}
	tail := dotTail{Early: early, Rows: rowsOf(x), TT: tt, Smem: st.Smem}
	ls, err := stream(st).launch(e.emitBounded(c, fn, int(threads), e.residentBound(staged, blocksX), gridTokenTiles(blocksX, rowsOf(x), tt), targs(tail)))
	return append(quant, ls...), err
}

// earlyFetchBlocks is the largest integer-path grid that fetches its first
// weight groups before waiting for the grid before it (rows_dot8's EARLY):
// 5 blocks of 256 threads per SM. Such
// launches (Qwen2.5-0.5B's qkv, o-proj, swiglu and down: 28-304 blocks;
// gpt-oss's qkv, 640, and Phi-3's, 576) sit near the launch-latency floor,
// where the DRAM round trip saved counts: 4 blocks an SM left gpt-oss's qkv
// out, and taking it in made gpt-oss-20b's decode 2 % faster. Larger ones are bandwidth-bound, and the registers holding
// the first groups across the wait (ptxas, sm_90: a Q6_K LM head 77 → 128)
// would cost them occupancy; except where a lane's share of each row is
// one 32-element group (oneGroup: Qwen2.5-0.5B's Q8_0 head, 28 groups a
// row): the first fetch is all of it, 48 → 64 registers (nvcc 11.8), and the
// early fetch made that head's decode step 1.9 % faster on an H200, where
// Phi-3's Q6_K head (48 groups of 64, 78 → 128) lost 0.9 %.
func (t tuning) earlyFetchBlocks() int64 { return 5 * t.SMs }

// fetchesEarly is the EARLY template argument of an integer-path kernel
// over x with blocksX blocks a token tile; oneGroup: each lane fetches one
// 32-element group of each row in all.
func (e *emitter) fetchesEarly(x *ir.Node, blocksX int64, oneGroup bool) bool {
	return e.tokenTile(x) == 1 && (oneGroup || blocksX*max(1, rowsOf(x)) <= e.earlyFetchBlocks())
}

// tokenTile is the tokens per block for x's rows in the schedule being
// emitted (passes.TokenTile).
func (e *emitter) tokenTile(x *ir.Node) int64 { return passes.TokenTile(x, e.prefill) }

// kernelOf is matrix or MoE node n's kernel family in the schedule being
// emitted, as the chooseKernels pass recorded it ("" for other nodes): in
// the batched decode schedule a matrix node's batch_decode_kernel.
func (e *emitter) kernelOf(n *ir.Node) string {
	if e.batchDecode {
		return n.Str("batch_decode_kernel")
	}
	if e.prefill {
		return n.Str("prefill_kernel")
	}
	return n.Str("kernel")
}

// intPath reports whether matrix node n's kernel in the schedule being
// emitted reads int16 activations (the q8 and tensor-core families).
func (e *emitter) intPath(n *ir.Node) bool {
	k := e.kernelOf(n)
	return k == ir.KernelQ8 || k == ir.KernelMMA || k == ir.KernelMMATokens
}

// gridTokenTiles is (x, ceil(rows/tt), 1); rows 0 means T.
func gridTokenTiles(x, rows, tt int64) grid {
	if rows > 0 {
		return grid{b: [3]int64{x, ceilDiv(rows, tt), 1}}
	}
	return grid{a: [3]int64{0, 1, 0}, b: [3]int64{x, 0, 1}, div: [3]int64{0, tt, 0}}
}

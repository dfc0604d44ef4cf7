package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

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
	kernel := e.kernelOf(n)
	if kernel == ir.KernelGEMM {
		return e.emitGEMM(c, n, in, out, "gemm_linear", func(t passes.GEMMTiles) any {
			return gemmLinearArgs{W: wa, B: ba, In: in, Out: out, BM: t.M, BN: t.N, Stages: t.Stages, Splits: t.Splits}
		})
	}
	if kernel == ir.KernelMMAHalves {
		return e.mmaHalvesRows(c, n, x, in, "linear_mmah", ceilDiv(out, 16), func(sh mmahShape) any {
			return linearMMAHArgs{W: wa, B: ba, In: in, Out: out, mmahShape: sh}
		})
	}
	if kernel == ir.KernelMMATokens {
		return e.mmaTokens(c, n, n, x, n.Inputs[1], in, "linear_mmat", ceilDiv(out, 16), func(nw, nt, rows int64, st mmatStream) any {
			a := linearMMATArgs{W: wa, B: ba, In: in, Out: out, NW: nw, NT: nt, Rows: rows}
			if st.KSL > 0 {
				return linearMMATStreamArgs{a, st}
			}
			return a
		})
	}
	if kernel == ir.KernelMMA {
		return e.linearSlabs(c, n, x, in, out, wa, ba)
	}
	g := gridRowsY(ceilDiv(out, 4), rowsOf(x))
	if kernel == ir.KernelGEMV {
		c.ptr(e, cIn, "x", x)
		c.ptr(e, cOut, "y", n)
		return e.emit(c, "linear_gemv", passes.LinThreads, g, linearGEMVArgs{W: wa, B: ba, In: in, Out: out})
	}
	s, blocks := e.LinearQ8Blocks(n.Inputs[1].DType, in, out)
	stage, err := e.stagesX(n, x, in, blocks)
	if err != nil {
		return nil, err
	}
	if stage {
		c.startsLate = n.Bool("starts_late")
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
	oneGroup := passes.IntDotGroups[n.Inputs[1].DType] == 32 && in/32 <= s
	da := wa.dotted()
	// dot8_q6_k's BOUNDED form where registers must let a staged grid's
	// blocks share the SMs.
	da.bounded = e.residentBound(stage, blocks) > 0 && n.Inputs[1].DType == ir.Q6_K
	return e.intDot(c, y, x, in, "linear_q8", passes.LinThreads, blocks, passes.Stream{}, stage, oneGroup, outs, func(t dotTail) any {
		return linearQ8Args{W: da, B: ba, In: in, Out: out, S: s, QX: stage, Greedy: greedy, Res: resReadOf(residual != nil), dotTail: t}
	})
}

// leavesGreedy reports whether linear n over x is the LM head of one token
// (the graph's output, the logits of one row), which then leaves the step's
// greedy pick in the state block (linear_q8's GREEDY): a greedy step needs
// no sampler launch after the graph (Qwen2.5-0.5B 0.526 → 0.505 ms a
// step).
func (e *emitter) leavesGreedy(n, x *ir.Node) bool {
	return n == e.output && rowsOf(x) == 1
}

// stagesX reports whether the integer linear n over x quantizes x itself,
// in shared memory (q8_rows.cu.tmpl, rows_dot8 with QX), instead of after
// a quantize_x8 launch, as the chooseStaging pass recorded it (stages_x,
// prefill_stages_x); it refuses a record that would read x's codes the
// scratch holds, or that exceeds the staging limits.
func (e *emitter) stagesX(n, x *ir.Node, in, blocks int64) (bool, error) {
	key := "stages_x"
	if e.prefill {
		key = "prefill_stages_x"
	}
	if !n.Bool(key) {
		return false, nil
	}
	held := e.scratchHoldsX(x)
	if held || e.tokenTile(x) != 1 || in*2+in/32*8 > passes.StagedXBytes || blocks > e.StagedXBlocks() {
		return false, fmt.Errorf("%s recorded where the linear cannot stage x (codes held %v, token tile %d, %d blocks, %d-wide row)", key, held, e.tokenTile(x), blocks, in)
	}
	return true, nil
}

// residentBound is the blocks an SM that a grid of blocksX blocks, staged
// if it quantizes x itself, must fit at once (its __launch_bounds__
// minimum), or 0. A staged grid is resident at once (stagesX) only where
// registers let its blocks share the SMs, which nothing held them to: the
// shorter dot8_q6_k took Phi-3's Q6_K down, 384 blocks, to 88 registers
// (nvcc 13), two blocks an SM, two waves: 12.6 → 15.3 µs (H100).
func (t tuning) residentBound(staged bool, blocksX int64) int {
	if perSM := ceilDiv(blocksX, t.SMs); staged && perSM > 1 {
		return int(perSM)
	}
	return 0
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

// linearSlabs emits decode linear n as linear_mmas (mma_slabs.cu.tmpl), in
// the geometry the chooseKernels pass recorded (mma_warps, mma_upw,
// mma_stages, stream_smem, stream_blocks): it reads x's int16 codes where
// the scratch holds them, else x itself, quantizing each slab (QX), as the
// passes' scratch walk expects (no quantize_x8 launch either way); with
// writes_sum it adds the residual and writes the add's sum (sumWriter).
func (e *emitter) linearSlabs(c *call, n, x *ir.Node, in, out int64, wa, ba accessor) ([]plans.Launch, error) {
	mma := mmaShapeOf(n)
	stages := n.Int("mma_stages")
	qx := !e.scratchHoldsX(x)
	if qx {
		c.ptr(e, cIn, "x", x)
		c.null()
		c.null()
	} else {
		c.null()
		if _, err := e.quantizedX(c, x, in); err != nil {
			return nil, err
		}
	}
	y, residual := n, (*ir.Node)(nil)
	if sum, r := e.sumWriter(n); sum != nil {
		y, residual = sum, r
	}
	c.ptr(e, cOut, "y", y)
	if residual != nil {
		c.ptr(e, cIn, "r", residual)
	} else {
		c.null()
	}
	e.stateArg(c)
	c.startsLate = n.Bool("starts_late")
	return stream(mma.st).launch(e.emit(c, "linear_mmas", int(mma.nw*32), gridTokenTiles(mma.st.Blocks, rowsOf(x), 1), linearMMASArgs{
		W: wa, B: ba, In: in, Out: out, NW: mma.nw, UPW: mma.upw, Stages: stages, QX: qx, Res: resReadOf(residual != nil),
		Rows: rowsOf(x), TT: 1, Smem: mma.st.Smem}))
}

package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// swiglu_linear(x, wg, wu) or (x, wgu [2F, in]): gate and up rows of one
// output column per warp, an act(g)·u epilogue of the node's gate activation
// (each family's GATE parameter); a prefill takes gemm_swiglu (emitGEMM).
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
	gate, err := gateOf(n)
	if err != nil {
		return nil, err
	}
	kernel := e.kernelOf(n)
	if kernel == ir.KernelGEMM {
		return e.emitGEMM(c, n, in, 2*f, "gemm_swiglu", func(t passes.GEMMTiles) any {
			if gate != gateSiLU {
				t.Splits = max(t.Splits, 1) // GATE follows SPLITS
			}
			return gemmSwiGLUArgs{WG: ga, WU: ua, In: in, F: f, UpRow0: upRow0, BM: t.M, BN: t.N, Stages: t.Stages, Splits: t.Splits, Gate: gate}
		})
	}
	if kernel == ir.KernelMMAHalves {
		return e.mmaHalvesRows(c, n, x, in, "swiglu_mmah", ceilDiv(f, 8), func(sh mmahShape) any {
			return swigluMMAHArgs{W: ga, In: in, F: f, UpRow0: upRow0, mmahShape: sh}
		})
	}
	if kernel == ir.KernelMMATokens {
		return e.mmaTokens(c, n, n, x, n.Inputs[1], in, "swiglu_mmat", ceilDiv(f, 8), func(nw, nt, rows int64, st mmatStream) any {
			a := swigluMMATShape{W: ga, In: in, F: f, UpRow0: upRow0, NW: nw, NT: nt, Rows: rows}
			if st.KSL > 0 {
				return swigluMMATStreamArgs{a, st, gate}
			}
			return swigluMMATArgs{a, gate}
		})
	}
	if kernel == ir.KernelGEMV {
		c.ptr(e, cIn, "x", x)
		c.ptr(e, cOut, "y", n)
		return e.emit(c, "swiglu_gemv", 128, gridRowsY(ceilDiv(f, 4), rowsOf(x)), swigluGEMVArgs{WG: ga, WU: ua, In: in, F: f, UpRow0: upRow0, Gate: gate})
	}
	if kernel == ir.KernelMMA {
		mma := mmaShapeOf(n)
		quant, xt, err := e.mmaInput(c, x, in)
		if err != nil {
			return nil, err
		}
		c.ptr(e, cOut, "y", n)
		e.stateArg(c)
		c.startsLate = n.Bool("starts_late")
		ls, err := stream(mma.st).launch(e.emit(c, "swiglu_mma", int(mma.nw*32), gridTokenTiles(mma.st.Blocks, rowsOf(x), 1), swigluMMAArgs{
			X: xt, W: ga, In: in, F: f, UpRow0: upRow0, NW: mma.nw, UPW: mma.upw,
			dotTail: dotTail{Rows: rowsOf(x), TT: 1, Smem: mma.st.Smem}, Gate: gate}))
		return append(quant, ls...), err
	}
	s, q8 := e.swigluLanes(n, x, in, f)
	sets, threads := passes.LinThreads/s, int64(passes.LinThreads)
	if q8 {
		sets, threads = passes.SwiGLUQ8Sets, passes.SwiGLUQ8Sets*s
	}
	outs := func(c *call) {
		if q8 {
			e.writesInt16(c, n, f, e.intScratchBytes(in), "yq", "ys") // past x's int16 form, which the kernel reads
		} else {
			c.null()
			c.null()
		}
	}
	blocks := ceilDiv(f, 2*sets)
	var st passes.Stream
	// stream_rows serves blocks of LIN_WARPS warps (q8's have 16 sets) whose
	// lanes take one group of each row: their activations, loaded once, are
	// what made streaming pay.
	if !q8 && in/passes.IntDotGroups[n.Inputs[1].DType] <= s {
		st = e.Streams(x, n.Inputs[1], e.prefill, in, blocks, 2, 2*sets)
	}
	return e.intDot(c, n, x, in, "swiglu_q8", threads, blocks, st, false, false, outs, func(t dotTail) any {
		return swigluQ8Args{W: ga.dotted(), In: in, F: f, UpRow0: upRow0, S: s, Warps: threads / 32, Q8: q8, dotTail: t, Gate: gate}
	})
}

// swigluLanes is swiglu_q8's lane-set size for swiglu_linear n over x
// [.., in] with F = f, and whether it quantizes its output (q8): where it
// feeds the integer path, one token a block, in at most
// passes.MaxSwiGLUThreads.
func (e *emitter) swigluLanes(n, x *ir.Node, in, f int64) (s int64, q8 bool) {
	s, _ = e.IntLanes(n.Inputs[1].DType, in, 2*f)
	return s, e.tokenTile(x) == 1 && e.writesCodes(n) && passes.SwiGLUQ8Sets*s <= passes.MaxSwiGLUThreads
}

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

package cuda

import (
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// quantizedX emits the launch quantizing x (none when its producer did) and
// adds the int16 activations and their scales to c.
func (e *emitter) quantizedX(c *call, x *ir.Node, in int64) ([]plans.Launch, error) {
	quant, xq, xs, err := e.quantizeX(x, in)
	c.arg(cXq, "xq", xq)
	c.arg(cScales, "xs", xs)
	return quant, err
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

// scratchX is the int16 form of an activation in the scratch: the value
// (heldValue; nil: none) and its codes' and scales' arguments;
// routes is the MoE whose router logits the value's norm wrote with them
// (routerOf), if any.
type scratchX struct {
	of     *ir.Node
	xq, xs plans.Arg
	routes *ir.Node
}

var scratchNone = scratchX{}

// quantizes adds producer p's int16 outputs for its value v (width cols)
// where the chooseCodes pass recorded that p
// writes them in the schedule being emitted (writes_codes,
// prefill_writes_codes, batch_decode_writes_codes), else nullptrs; it
// returns the Q8 template argument.
func (e *emitter) quantizes(c *call, p, v *ir.Node, cols int64) bool {
	if !e.writesCodes(p) {
		c.null()
		c.null()
		return false
	}
	e.writesInt16(c, v, cols, 0, "xq", "xs")
	return true
}

// writesCodes reports whether producer p writes its output's int16 codes
// in the schedule being emitted (chooseCodes).
func (e *emitter) writesCodes(p *ir.Node) bool {
	switch {
	case e.batchDecode:
		return p.Bool("batch_decode_writes_codes")
	case e.prefill:
		return p.Bool("prefill_writes_codes")
	}
	return p.Bool("writes_codes")
}

// writesInt16 adds the int16 outputs (parameters q and s) for value v
// (width cols), past bytes into the scratch (after the int16 input the
// producer itself reads), and records that the scratch holds them.
func (e *emitter) writesInt16(c *call, v *ir.Node, cols, past int64, q, s string) {
	xq, xs := e.scratchArgs(cols, past)
	c.arg("xq_t* __restrict__", q, xq)
	c.arg("float2* __restrict__", s, xs)
	e.scratchHolds = scratchX{of: e.heldValue(v), xq: xq, xs: xs}
}

// quantizeX emits the launch quantizing x [rows, in] to int16 in the scratch
// after the planned arena, unless the scratch already holds x (its producer
// quantized it and nothing has overwritten it since), and returns the
// scratch arguments.
func (e *emitter) quantizeX(x *ir.Node, in int64) ([]plans.Launch, plans.Arg, plans.Arg, error) {
	if e.scratchHoldsX(x) {
		return nil, e.scratchHolds.xq, e.scratchHolds.xs, nil
	}
	xq, xs := e.scratchArgs(in, 0)
	xa, err := e.value(x)
	if err != nil {
		return nil, xq, xs, err
	}
	e.scratchHolds = scratchX{of: e.heldValue(x), xq: xq, xs: xs}
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
// or an earlier reader quantized it and nothing has overwritten the
// scratch since. The value, not its arena offset, says so: a later value
// the memory plan puts at x's offset is not x.
func (e *emitter) scratchHoldsX(x *ir.Node) bool {
	return e.scratchHolds.of != nil && e.scratchHolds.of == e.heldValue(x)
}

// heldValue is the value whose codes reading x reads: a decode last row in
// place is its input (lastIsRow).
func (e *emitter) heldValue(x *ir.Node) *ir.Node {
	for x.Op == ir.OpLast && e.lastIsRow(x) {
		x = x.Inputs[0]
	}
	return x
}

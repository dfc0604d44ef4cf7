package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// value is the launch argument pointing at a node's value: a weight, an
// input in the state block, an arena buffer, or in a batched step's
// per-row part the batch region.
func (e *emitter) value(n *ir.Node) (plans.Arg, error) {
	if a, ok := e.batchValues[n]; ok {
		return a, nil
	}
	if n.Op == ir.OpLast && e.lastIsRow(n) {
		return e.value(n.Inputs[0])
	}
	switch n.Op {
	case ir.OpWeight:
		w, err := e.tensor(n)
		if err != nil {
			return plans.Arg{}, err
		}
		return plans.Arg{Kind: plans.ArgWeight, Offset: w.Offset + w.start}, nil
	case ir.OpInput:
		switch n.Str("name") {
		case "tokens":
			return plans.Arg{Kind: plans.ArgState, Offset: e.state.Tokens}, nil
		case "positions":
			return plans.Arg{Kind: plans.ArgState, Offset: e.state.Positions}, nil
		}
		return plans.Arg{}, fmt.Errorf("input %q is neither tokens nor positions", n.Str("name"))
	}
	off, ok := n.Attrs["offset"].(int64)
	if !ok {
		return plans.Arg{}, fmt.Errorf("node %d (%s) has no arena offset: run the planMemory pass first", n.ID, n.Op)
	}
	return plans.Arg{Kind: plans.ArgArena, Offset: off}, nil
}

// activation checks that n is an f32 activation [T, cols] (or [1, cols]) and
// returns cols.
func activation(n *ir.Node) (int64, error) {
	if n.DType != ir.F32 || len(n.Shape) != 2 || n.Shape[1] < 1 {
		return 0, fmt.Errorf("input node %d (%s) is %s %v, want f32 [T, cols]", n.ID, n.Op, n.DType, n.Shape)
	}
	return n.Shape[1], nil
}

// weightSpan is the bytes a weight node reads: its tensor's entry in the
// plan's table, and for a row range (ir weight rows) the span's start in
// the tensor and its length; a whole tensor is the span [0, Bytes).
type weightSpan struct {
	*plans.Tensor
	start, bytes int64
}

// rangeAlign is what a row range's start must be a multiple of: the
// accessors read weights with 128-bit loads.
const rangeAlign = 16

// tensor finds a weight node's entry in the plan's tensor table and the
// span of it the node reads.
func (e *emitter) tensor(n *ir.Node) (weightSpan, error) {
	if n.Op != ir.OpWeight {
		return weightSpan{}, fmt.Errorf("input node %d is %s, want a weight", n.ID, n.Op)
	}
	t, ok := e.tensors[n.Str("name")]
	if !ok {
		return weightSpan{}, fmt.Errorf("weight %q is not in the plan's tensor table", n.Str("name"))
	}
	if t.DType != n.DType.String() {
		return weightSpan{}, fmt.Errorf("weight %q is %s in the graph but %s in the tensor table", t.Name, n.DType, t.DType)
	}
	if t.Offset%plans.Alignment != 0 {
		return weightSpan{}, fmt.Errorf("weight %q at offset %d is not %d-byte aligned", t.Name, t.Offset, plans.Alignment)
	}
	first, count, ranged := n.RowRange()
	if !ranged {
		if len(t.Segments) > 1 {
			return weightSpan{}, fmt.Errorf("weight %q is laid out in segments %v; a kernel cannot read it whole", t.Name, t.Segments)
		}
		return weightSpan{t, 0, t.Bytes}, nil
	}
	start, bytes, err := t.Rows(first, count)
	if err != nil {
		return weightSpan{}, err
	}
	if start%rangeAlign != 0 {
		return weightSpan{}, fmt.Errorf("weight %q rows from %d start at byte %d, not a multiple of %d", t.Name, first, start, rangeAlign)
	}
	return weightSpan{t, start, bytes}, nil
}

// accessor is the weight accessor (weights.cu.tmpl) of a weight node.
func (e *emitter) accessor(n *ir.Node) (accessor, error) {
	t, err := e.tensor(n)
	if err != nil {
		return noWeight, err
	}
	if ir.BlockBytes(n.DType) == 0 || n.DType == ir.I32 {
		return noWeight, fmt.Errorf("weight %q has dtype %s, which no kernel reads", t.Name, n.DType)
	}
	elems := n.Shape.Elems(1)
	if elems%ir.BlockElems(n.DType) != 0 || ir.RowBytes(n.DType, elems) != t.bytes {
		return noWeight, fmt.Errorf("weight %q: %d elements of %s do not make %d bytes", t.Name, elems, n.DType, t.bytes)
	}
	a := accessor{dtype: n.DType, blocks: elems / ir.BlockElems(n.DType)}
	switch {
	case t.Layout == "":
	case t.Layout == passes.LayoutName(n.DType):
		_, a.split = splitLayouts[n.DType]
	default:
		return noWeight, fmt.Errorf("weight %q has layout %q; the CUDA kernels read \"\" or %q", t.Name, t.Layout, passes.LayoutName(n.DType))
	}
	return a, nil
}

// vectorAccessor is the accessor of a weight read one element at a time
// (norm weights, biases, sinks): plain float types only.
func (e *emitter) vectorAccessor(n *ir.Node, want int64) (accessor, error) {
	if n.DType != ir.F32 && n.DType != ir.F16 && n.DType != ir.BF16 {
		return noWeight, fmt.Errorf("weight %q is %s; vectors (norms, biases, sinks) must be f32, f16 or bf16", n.Str("name"), n.DType)
	}
	if n.Shape.Elems(1) != want {
		return noWeight, fmt.Errorf("weight %q has %d elements, want %d", n.Str("name"), n.Shape.Elems(1), want)
	}
	return e.accessor(n)
}

// grid is a launch's grid: GridA·T + GridB, ceil-divided by GridDiv.
type grid struct{ a, b, div [3]int64 }

// rowsOf is an activation's row count when its shape fixes it ([1, n] after
// last), 0 when it is the step's T.
func rowsOf(n *ir.Node) int64 {
	if len(n.Shape) == 0 || n.Shape[0] == ir.T {
		return 0
	}
	return n.Shape[0]
}

// gridRowsY is (x, rows, 1): x blocks per row; rows 0 means T.
func gridRowsY(x, rows int64) grid {
	if rows > 0 {
		return grid{b: [3]int64{x, rows, 1}}
	}
	return grid{a: [3]int64{0, 1, 0}, b: [3]int64{x, 0, 1}}
}

// gridRowsX is (rows, 1, 1): one block per row; rows 0 means T.
func gridRowsX(rows int64) grid {
	if rows > 0 {
		return grid{b: [3]int64{rows, 1, 1}}
	}
	return grid{a: [3]int64{1, 0, 0}, b: [3]int64{0, 1, 1}}
}

// gridElems is one thread per element of [rows, cols] in blocks of threads;
// rows 0 means T.
func gridElems(rows, cols int64, threads int) grid {
	div := [3]int64{int64(threads), 0, 0}
	if rows > 0 {
		return grid{b: [3]int64{rows * cols, 1, 1}, div: div}
	}
	return grid{a: [3]int64{cols, 0, 0}, b: [3]int64{0, 1, 1}, div: div}
}

// gridFixed is (x, 1, 1) whatever T.
func gridFixed(x int64) grid { return grid{b: [3]int64{x, 1, 1}} }

// launch registers k and returns its launch record.
func (e *emitter) launch(k *instance, g grid, args ...plans.Arg) plans.Launch {
	return plans.Launch{
		Kernel:  e.kernels.add(k),
		GridA:   g.a,
		GridB:   g.b,
		GridDiv: g.div,
		Block:   [3]int{k.Threads, 1, 1},
		Args:    args,
	}
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

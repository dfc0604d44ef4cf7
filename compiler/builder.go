package compiler

import (
	"fmt"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
)

// builder appends nodes to one graph. Weight nodes are made on first use and
// shared after, so node order is the order the graph first needs each weight:
// the plan uploads weights in that order.
type builder struct {
	g       *ir.Graph
	weights map[string]*ir.Node // by GGUF name
	err     error               // first error; every later call is a no-op returning nil
}

func newBuilder() *builder {
	return &builder{g: ir.New(), weights: map[string]*ir.Node{}}
}

func (b *builder) fail(format string, args ...any) *ir.Node {
	if b.err == nil {
		b.err = fmt.Errorf("compiler: "+format, args...)
	}
	return nil
}

// add appends a node unless an earlier step failed or an input is missing.
func (b *builder) add(op ir.Op, shape ir.Shape, attrs map[string]any, inputs ...*ir.Node) *ir.Node {
	if b.err != nil {
		return nil
	}
	for _, in := range inputs {
		if in == nil {
			return b.fail("%s: an input the architecture needs is missing", op)
		}
	}
	return b.g.Add(op, ir.F32, shape, attrs, inputs...)
}

// weight returns the node of a GGUF tensor; a nil t is an absent tensor and
// gives nil, which callers pass on as "no bias" or fail on as missing.
func (b *builder) weight(t *gguf.TensorInfo) *ir.Node {
	if b.err != nil || t == nil {
		return nil
	}
	if n, ok := b.weights[t.Name]; ok {
		return n
	}
	dt, err := irDType(t.Type)
	if err != nil {
		return b.fail("tensor %s: %v", t.Name, err)
	}
	n := b.g.Add(ir.OpWeight, dt, rowMajor(t.Dims), map[string]any{"name": t.Name})
	b.weights[t.Name] = n
	return n
}

// linear is y[T, out] = x·wᵀ (+ bias when bias is non-nil).
func (b *builder) linear(x, w, bias *ir.Node) *ir.Node {
	if b.err != nil || x == nil || w == nil {
		return b.add(ir.OpLinear, nil, nil, x, w)
	}
	out := ir.Shape{x.Shape[0], w.Shape[0]}
	if bias == nil {
		return b.add(ir.OpLinear, out, nil, x, w)
	}
	return b.add(ir.OpLinear, out, nil, x, w, bias)
}

// split cuts x's columns into parts and returns one view per part.
func (b *builder) split(x *ir.Node, parts ...int64) []*ir.Node {
	s := b.add(ir.OpSplit, ir.Shape{ir.T, sum(parts)}, map[string]any{"parts": parts}, x)
	views := make([]*ir.Node, len(parts))
	for i, c := range parts {
		views[i] = b.add(ir.OpView, ir.Shape{ir.T, c}, map[string]any{"part": int64(i)}, s)
	}
	return views
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// rowMajor reverses GGUF's ne0-first dims into the IR's row-major order.
func rowMajor(dims []uint64) ir.Shape {
	s := make(ir.Shape, len(dims))
	for i, d := range dims {
		s[len(dims)-1-i] = int64(d)
	}
	return s
}

var dtypeOf = map[gguf.Type]ir.DType{
	gguf.F32: ir.F32, gguf.F16: ir.F16, gguf.BF16: ir.BF16,
	gguf.Q4_0: ir.Q4_0, gguf.Q5_0: ir.Q5_0, gguf.Q8_0: ir.Q8_0,
	gguf.Q4_K: ir.Q4_K, gguf.Q5_K: ir.Q5_K, gguf.Q6_K: ir.Q6_K, gguf.MXFP4: ir.MXFP4,
}

// irDType maps a ggml storage type to the IR's dtype.
func irDType(t gguf.Type) (ir.DType, error) {
	d, ok := dtypeOf[t]
	if !ok {
		return 0, fmt.Errorf("ggml type %v has no IR dtype", t)
	}
	return d, nil
}

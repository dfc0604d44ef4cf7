// Package ir is orc's intermediate representation: one small node type, a
// graph of nodes in schedule order, a verifier, and a text form that prints
// and parses back. It imports nothing else of orc's.
//
// Conventions:
//   - Shapes are row-major: the last dimension is contiguous. A weight that
//     GGUF stores as [ne0=n_in, ne1=n_out] is [n_out, n_in] here.
//   - The dimension T (the number of tokens of this step: n for prefill, 1 for
//     decode) is symbolic and written "T"; it is resolved at run time.
//   - Activations are f32. Weights keep their storage dtype (q4_k, f16, ...).
//   - Every graph has the attribute max_tokens (int64): the largest T a step
//     may have. Buffers are planned for it.
//   - Ops with several results pack them into one node and consumers select
//     one with view{part}. Part i of a packed node with parts [c0, c1, ...] is
//     a contiguous [T, c_i] block starting at element max_tokens·(c0+…+c_{i-1})
//     of the node's buffer, so part offsets do not depend on T.
package ir

import "fmt"

// T is the symbolic token dimension.
const T int64 = -1

// DType is an element type.
type DType uint8

const (
	F32 DType = iota
	F16
	BF16
	I32
	Q4_0
	Q5_0
	Q8_0
	Q4_K
	Q5_K
	Q6_K
	MXFP4
	None // ops that produce no tensor
)

var dtypeNames = [...]string{"f32", "f16", "bf16", "i32", "q4_0", "q5_0", "q8_0", "q4_k", "q5_k", "q6_k", "mxfp4", "none"}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", d)
}

// ParseDType is the inverse of DType.String.
func ParseDType(s string) (DType, bool) {
	for i, n := range dtypeNames {
		if n == s {
			return DType(i), true
		}
	}
	return 0, false
}

// Quantized reports whether d is a block-quantized type.
func (d DType) Quantized() bool { return d >= Q4_0 && d <= MXFP4 }

// Shape is a list of dimensions; T marks the token dimension.
type Shape []int64

// Elems returns the element count with T bound to t.
func (s Shape) Elems(t int64) int64 {
	n := int64(1)
	for _, d := range s {
		if d == T {
			d = t
		}
		n *= d
	}
	return n
}

// Equal compares two shapes.
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// Node is the one node type: an op applied to inputs, giving one result of a
// dtype and shape. Attribute values are int64, float64, string, bool or []int64.
type Node struct {
	ID     int
	Op     Op
	DType  DType
	Shape  Shape
	Inputs []*Node
	Attrs  map[string]any
}

// Graph is a list of nodes in schedule order (every input precedes its use)
// plus the nodes whose values the caller reads.
type Graph struct {
	Attrs   map[string]any // model-level facts: arch, n_layer, vocab, ctx ...
	Nodes   []*Node
	Outputs []*Node
	nextID  int
}

// New returns an empty graph.
func New() *Graph { return &Graph{Attrs: map[string]any{}} }

// Add appends a node and returns it.
func (g *Graph) Add(op Op, dt DType, shape Shape, attrs map[string]any, inputs ...*Node) *Node {
	if attrs == nil {
		attrs = map[string]any{}
	}
	n := &Node{ID: g.nextID, Op: op, DType: dt, Shape: shape, Inputs: inputs, Attrs: attrs}
	g.nextID++
	g.Nodes = append(g.Nodes, n)
	return n
}

// Int reads an integer attribute (0 when absent).
func (n *Node) Int(key string) int64 { v, _ := n.Attrs[key].(int64); return v }

// Float reads a float attribute (0 when absent).
func (n *Node) Float(key string) float64 { v, _ := n.Attrs[key].(float64); return v }

// Str reads a string attribute ("" when absent).
func (n *Node) Str(key string) string { v, _ := n.Attrs[key].(string); return v }

// Bool reads a bool attribute (false when absent).
func (n *Node) Bool(key string) bool { v, _ := n.Attrs[key].(bool); return v }

// Ints reads an []int64 attribute (nil when absent).
func (n *Node) Ints(key string) []int64 { v, _ := n.Attrs[key].([]int64); return v }

// RowRange reads a weight's rows=[first, count] attribute (see OpWeight);
// ok is false for a whole tensor.
func (n *Node) RowRange() (first, count int64, ok bool) {
	r := n.Ints("rows")
	if len(r) != 2 {
		return 0, 0, false
	}
	return r[0], r[1], true
}

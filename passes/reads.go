package passes

import (
	"slices"

	"github.com/llama-orch/orc/ir"
)

// NormBehind is the RMSNorm whose normed row x is (x itself, or part 1 of
// an add_rmsnorm), or nil. A decode kernel reading such a row may fold the
// norm in and read the norm's inputs itself (codegen/cuda, foldedNorm), so
// that the norm launches nothing: readsOf keeps those inputs alive through
// the readers that may.
func NormBehind(x *ir.Node) *ir.Node {
	switch {
	case x.Op == ir.OpRMSNorm:
		return x
	case x.Op == ir.OpView && x.Int("part") == 1 && x.Inputs[0].Op == ir.OpAddRMSNorm:
		return x.Inputs[0]
	}
	return nil
}

// readsOf are the values whose buffers node n reads: its inputs, and where
// n is a qkv or swiglu_linear over a normed row (the readers with a
// tensor-core decode kernel), the norm's inputs too.
func readsOf(n *ir.Node) []*ir.Node {
	if n.Op != ir.OpQKV && n.Op != ir.OpSwiGLULinear {
		return n.Inputs
	}
	norm := NormBehind(n.Inputs[0])
	if norm == nil {
		return n.Inputs
	}
	return append(slices.Clone(n.Inputs), norm.Inputs...)
}

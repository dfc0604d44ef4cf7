package cuda

import (
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// foldedNorm is the decode RMSNorm (ir.NormBehind) whose normed row x
// only a tensor-core kernel reads (qkv_mma, swiglu_mma) that folds the norm
// in (fold_norm, the chooseKernels pass; XNorm, mma.cu.tmpl): the norm
// launches nothing, and its reader reads the norm's inputs, which
// planMemory keeps alive through it (or the add's sum alone, where a
// linear wrote it: sumWriter). nil where x is no such row.
func (e *emitter) foldedNorm(x *ir.Node) *ir.Node {
	norm := ir.NormBehind(x)
	if e.prefill || norm == nil || len(e.users[x]) != 1 {
		return nil
	}
	if u := e.users[x][0]; u.Inputs[0] != x || !u.Bool("fold_norm") {
		return nil
	}
	return norm
}

// sumWriter is the add_rmsnorm whose sum decode linear n writes in place
// of its own output (writes_sum, the chooseKernels pass), adding the add's
// other input, the residual, to its rows (linear_q8's RES), and that
// residual; the add's folded reader (foldedNorm) then reads the sum alone.
// nil otherwise.
func (e *emitter) sumWriter(n *ir.Node) (sum, residual *ir.Node) {
	if e.prefill || !n.Bool("writes_sum") {
		return nil, nil
	}
	sum = e.users[n][0]
	if l, residual := passes.ResidualWriter(sum, e.users); l == n {
		return sum, residual
	}
	return nil, nil
}

// sumWritten reports whether add_rmsnorm norm's sum is written by the
// linear that adds into it (sumWriter).
func (e *emitter) sumWritten(norm *ir.Node) bool {
	l, _ := passes.ResidualWriter(norm, e.users)
	if l == nil {
		return false
	}
	sum, _ := e.sumWriter(l)
	return sum == norm
}

// mmaInput adds a tensor-core kernel's activations to c — xq, xs, a, b,
// nw, pw, s, nullptrs where absent — and returns the launch they need
// first and the kernel's X template argument: the norm's inputs, weights
// and sum where the norm of x is folded (foldedNorm; XNorm, or XPostNorm
// for an add_post_rmsnorm, whose post-norm weights are pw), else x's int16
// codes and scales (XCodes), after the launch quantizing x unless its
// producer did.
func (e *emitter) mmaInput(c *call, x *ir.Node, in int64) ([]plans.Launch, mmaX, error) {
	norm := e.foldedNorm(x)
	if norm == nil {
		quant, err := e.quantizedX(c, x, in)
		for range 5 {
			c.null()
		}
		return quant, mmaX{}, err
	}
	c.null()
	c.null()
	w := norm.Inputs[len(norm.Inputs)-1]
	post := norm.Op == ir.OpAddPostNorm
	add := post || norm.Op == ir.OpAddRMSNorm && !e.sumWritten(norm)
	switch {
	case add:
		c.ptr(e, cIn, "a", norm.Inputs[0])
		c.ptr(e, cIn, "b", norm.Inputs[1])
	case norm.Op == ir.OpAddRMSNorm: // the linear wrote the sum: part 0
		c.ptr(e, cIn, "a", norm)
		c.null()
	default:
		c.ptr(e, cIn, "a", norm.Inputs[0])
		c.null()
	}
	wa, err := e.vectorAccessor(w, in)
	c.ptr(e, cWeight, "nw", w)
	var pa accessor
	if post {
		wb := norm.Inputs[2]
		if pa, err = e.vectorAccessor(wb, in); err != nil {
			return nil, mmaX{}, err
		}
		c.ptr(e, cWeight, "pw", wb)
	} else {
		c.null()
	}
	if add {
		c.ptr(e, cOut, "s", norm) // part 0, the sum
	} else {
		c.null()
	}
	return nil, mmaX{folded: true, norm: e.normConfig(norm), w: wa, add: add, post: post, pw: pa}, err
}

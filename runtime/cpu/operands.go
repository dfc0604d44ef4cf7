package cpu

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
)

// weightInputs lists, per op, the input positions that are weights; every
// other f32 input is an activation. ir.Verify checks shapes and dtypes but
// not where a value comes from, and the kernels index weights and
// activation buffers differently.
var weightInputs = map[ir.Op][]int{
	ir.OpEmbed:        {0},
	ir.OpRMSNorm:      {1},
	ir.OpLayerNorm:    {1, 2},
	ir.OpLinear:       {1, 2},
	ir.OpAttention:    {3},
	ir.OpMoE:          {1, 2, 3, 4, 5, 6, 7, 8},
	ir.OpQKV:          {1, 2, 3, 4, 5, 6},
	ir.OpSwiGLULinear: {1, 2},
	ir.OpAddRMSNorm:   {2},
	ir.OpAddLayerNorm: {2, 3},
	ir.OpAddPostNorm:  {2, 3},
	ir.OpHeadRMSNorm:  {1},
	ir.OpNormRoPE:     {1},
}

// stepOps read the step's tokens or positions row by row, so their rows
// must be the step's T.
var stepOps = map[ir.Op]bool{ir.OpEmbed: true, ir.OpRoPE: true, ir.OpAttention: true, ir.OpQKV: true, ir.OpNormRoPE: true}

// checkOperands rejects graphs the kernels cannot index safely: a weight
// where an activation belongs or the reverse, an i32 value that is not a
// graph input, an activation whose rows are neither T nor 1.
func (pr *program) checkOperands(n *ir.Node) error {
	if n.Op == ir.OpWeight || n.Op == ir.OpInput {
		return nil
	}
	if r := n.Shape[0]; r != ir.T && (r != 1 || stepOps[n.Op]) {
		return fmt.Errorf("%d rows; the CPU device runs activations of T rows (or 1 after last)", r)
	}
	isWeight := map[int]bool{}
	for _, i := range weightInputs[n.Op] {
		isWeight[i] = true
	}
	for i, in := range n.Inputs {
		_, weight := pr.weights[in]
		switch {
		case in.DType == ir.I32:
			if in.Op != ir.OpInput {
				return fmt.Errorf("input %d (%%%d %s) is i32 but not a graph input", i, in.ID, in.Op)
			}
		case isWeight[i] && !weight:
			return fmt.Errorf("input %d (%%%d %s) must be a weight", i, in.ID, in.Op)
		case !isWeight[i] && weight:
			return fmt.Errorf("input %d (%%%d weight %s) must be an activation", i, in.ID, in.Str("name"))
		}
	}
	return nil
}

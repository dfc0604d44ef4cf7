package passes

import "github.com/llama-orch/orc/ir"

// fuseResidualNorm turns a residual add feeding a norm — rmsnorm(add(a, b),
// w) or layernorm(add(a, b), w, bias) — into add_rmsnorm / add_layernorm,
// packed [sum, normed], with a view per part: one kernel reads a and b once
// and writes both the new residual stream and its normed copy. The norm's
// readers take view part 1; every other reader of the sum (the next
// residual add) takes view part 0.
func fuseResidualNorm(g *ir.Graph) error {
	dead := map[*ir.Node]bool{}
	for _, norm := range g.Nodes {
		fused, ok := residualNormOps[norm.Op]
		if !ok || dead[norm] {
			continue
		}
		sum := norm.Inputs[0]
		if sum.Op != ir.OpAdd || dead[sum] {
			continue
		}
		cols := sum.Shape[1]
		inputs := append([]*ir.Node{sum.Inputs[0], sum.Inputs[1]}, norm.Inputs[1:]...)
		n := g.Add(fused, ir.F32, ir.Shape{sum.Shape[0], 2 * cols},
			map[string]any{"eps": norm.Attrs["eps"], "parts": []int64{cols, cols}}, inputs...)
		replaceUses(g, norm, addView(g, n, 1))
		replaceUses(g, sum, addView(g, n, 0))
		dead[norm], dead[sum] = true, true
	}
	if len(dead) > 0 {
		removeNodes(g, dead)
		restoreOrder(g)
	}
	return nil
}

// residualNormOps maps a norm to its fused add+norm op.
var residualNormOps = map[ir.Op]ir.Op{ir.OpRMSNorm: ir.OpAddRMSNorm, ir.OpLayerNorm: ir.OpAddLayerNorm}

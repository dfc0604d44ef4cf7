package passes

import (
	"slices"

	"github.com/llama-orch/orc/ir"
)

// fusePostNorms turns a branch's post-norm, the residual add and the next
// pre-norm — add_rmsnorm(a, rmsnorm(b, wb), w), as fuseResidualNorm leaves
// Gemma's norms after attention and after the FFN — into one
// add_post_rmsnorm(a, b, wb, w): one kernel norms b, adds it to a and
// norms the sum, where three rows went through memory between two
// launches. The post-norm must have no other reader (nor be an output) and
// the same eps.
func fusePostNorms(g *ir.Graph) error {
	use := users(g)
	dead := map[*ir.Node]bool{}
	for _, n := range g.Nodes {
		if n.Op != ir.OpAddRMSNorm {
			continue
		}
		for k := range 2 {
			post, a := n.Inputs[k], n.Inputs[1-k]
			if post.Op != ir.OpRMSNorm || len(use[post]) != 1 || slices.Contains(g.Outputs, post) || post.Float("eps") != n.Float("eps") {
				continue
			}
			fused := g.Add(ir.OpAddPostNorm, ir.F32, n.Shape, map[string]any{"eps": n.Attrs["eps"], "parts": n.Attrs["parts"]},
				a, post.Inputs[0], post.Inputs[1], n.Inputs[2])
			replaceUses(g, n, fused)
			dead[n], dead[post] = true, true
			break
		}
	}
	if len(dead) > 0 {
		removeNodes(g, dead)
		restoreOrder(g)
	}
	return nil
}

package passes

import "github.com/llama-orch/orc/ir"

// eliminateDead drops nodes nothing needs: those the outputs do not depend
// on, except attention (it writes its layer's KV cache, which later steps
// read) and the graph inputs (the runtime fills them by name whether or
// not they are read). Unread weights go too, so the plan does not upload
// them.
func eliminateDead(g *ir.Graph) error {
	live := map[*ir.Node]bool{}
	var mark func(n *ir.Node)
	mark = func(n *ir.Node) {
		if live[n] {
			return
		}
		live[n] = true
		for _, in := range n.Inputs {
			mark(in)
		}
	}
	for _, o := range g.Outputs {
		mark(o)
	}
	for _, n := range g.Nodes {
		if n.Op == ir.OpAttention || n.Op == ir.OpInput {
			mark(n)
		}
	}
	dead := map[*ir.Node]bool{}
	for _, n := range g.Nodes {
		if !live[n] {
			dead[n] = true
		}
	}
	removeNodes(g, dead)
	return nil
}

package passes

import "github.com/llama-orch/orc/ir"

// schedule fixes the final order, the order kernels launch in:
//
//   - Graph inputs, then weights, first, in their current order: they are
//     not kernels and hold no arena memory; the weights' order is the upload
//     order lowering chose (first use).
//   - Then every computing node as late as possible: a depth-first walk from
//     the outputs that places a node's inputs, in input order, right before
//     the node. A value is thus computed just before its first reader, which
//     keeps live ranges short and the planned arena small; attention, whose
//     KV-cache write is a side effect, is reached through the residual
//     stream like everything else.
//   - Nodes the outputs do not reach (attention of a layer whose result is
//     unread) follow in their current order, inputs first.
//
// Every input precedes its use, whatever order the graph came in.
func schedule(g *ir.Graph) error {
	order := make([]*ir.Node, 0, len(g.Nodes))
	placed := make(map[*ir.Node]bool, len(g.Nodes))
	for _, n := range g.Nodes {
		if n.Op == ir.OpInput {
			order = append(order, n)
			placed[n] = true
		}
	}
	for _, n := range g.Nodes {
		if n.Op == ir.OpWeight {
			order = append(order, n)
			placed[n] = true
		}
	}
	var place func(n *ir.Node)
	place = func(n *ir.Node) {
		if placed[n] {
			return
		}
		placed[n] = true
		for _, in := range n.Inputs {
			place(in)
		}
		order = append(order, n)
	}
	for _, o := range g.Outputs {
		place(o)
	}
	for _, n := range g.Nodes {
		place(n)
	}
	g.Nodes = order
	return nil
}

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
	o := newOrdering(len(g.Nodes))
	for _, op := range []ir.Op{ir.OpInput, ir.OpWeight} {
		for _, n := range g.Nodes {
			if n.Op == op {
				o.place(n)
			}
		}
	}
	for _, n := range g.Outputs {
		o.place(n)
	}
	for _, n := range g.Nodes {
		o.place(n)
	}
	g.Nodes = o.nodes
	return nil
}

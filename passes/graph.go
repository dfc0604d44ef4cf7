package passes

import "github.com/llama-orch/orc/ir"

// users maps every node to the nodes that read it, in schedule order (a
// node reading x twice is listed twice).
func users(g *ir.Graph) map[*ir.Node][]*ir.Node {
	u := make(map[*ir.Node][]*ir.Node, len(g.Nodes))
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			u[in] = append(u[in], n)
		}
	}
	return u
}

// replaceUses makes every reader of old (and the outputs) read new instead.
func replaceUses(g *ir.Graph, old, new *ir.Node) {
	for _, n := range g.Nodes {
		for i, in := range n.Inputs {
			if in == old {
				n.Inputs[i] = new
			}
		}
	}
	for i, o := range g.Outputs {
		if o == old {
			g.Outputs[i] = new
		}
	}
}

// removeNodes drops the given nodes from the schedule; the caller has
// already moved their uses elsewhere.
func removeNodes(g *ir.Graph, dead map[*ir.Node]bool) {
	if len(dead) == 0 {
		return
	}
	kept := g.Nodes[:0]
	for _, n := range g.Nodes {
		if !dead[n] {
			kept = append(kept, n)
		}
	}
	clear(g.Nodes[len(kept):])
	g.Nodes = kept
}

// restoreOrder re-establishes "inputs before uses" after a rewrite appended
// new nodes at the end: it keeps the current order but pulls each node's
// not-yet-placed inputs in just before it, so a fused node lands where its
// first reader needs it.
func restoreOrder(g *ir.Graph) {
	o := newOrdering(len(g.Nodes))
	for _, n := range g.Nodes {
		o.place(n)
	}
	g.Nodes = o.nodes
}

// ordering builds a schedule in which every node follows its inputs.
type ordering struct {
	placed map[*ir.Node]bool
	nodes  []*ir.Node
}

func newOrdering(size int) *ordering {
	return &ordering{placed: make(map[*ir.Node]bool, size), nodes: make([]*ir.Node, 0, size)}
}

// place appends n after placing, depth first and in input order, those of
// its inputs not placed yet.
func (o *ordering) place(n *ir.Node) {
	if o.placed[n] {
		return
	}
	o.placed[n] = true
	for _, in := range n.Inputs {
		o.place(in)
	}
	o.nodes = append(o.nodes, n)
}

// addView adds view{part} of a packed node.
func addView(g *ir.Graph, packed *ir.Node, part int) *ir.Node {
	width := packed.Ints("parts")[part]
	return g.Add(ir.OpView, ir.F32, ir.Shape{packed.Shape[0], width}, map[string]any{"part": int64(part)}, packed)
}

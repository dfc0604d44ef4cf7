package passes

import "github.com/llama-orch/orc/ir"

// fuseQKV turns the three projections feeding one attention — linear(x, wq),
// linear(x, wk), linear(x, wv) of the same x, each maybe through a rope —
// into one qkv(x, wq, wk, wv [, bq, bk, bv]) node with parts [q, k, v] and a
// view per part: one kernel reads x once for all three. Biases move with
// their weights; projections with some but not all biases stay unfused.
// Fused attn_qkv weights (phi3, gpt2) are already one linear and are left
// as they are.
func fuseQKV(g *ir.Graph) error {
	changed := false
	for _, a := range g.Nodes {
		if a.Op != ir.OpAttention {
			continue
		}
		var proj [3]*ir.Node
		for i := range proj {
			proj[i] = projection(a.Inputs[i])
		}
		if !fusableQKV(proj) {
			continue
		}
		x := proj[0].Inputs[0]
		inputs := []*ir.Node{x, proj[0].Inputs[1], proj[1].Inputs[1], proj[2].Inputs[1]}
		if len(proj[0].Inputs) == 3 {
			inputs = append(inputs, proj[0].Inputs[2], proj[1].Inputs[2], proj[2].Inputs[2])
		}
		parts := []int64{proj[0].Shape[1], proj[1].Shape[1], proj[2].Shape[1]}
		qkv := g.Add(ir.OpQKV, ir.F32, ir.Shape{x.Shape[0], parts[0] + parts[1] + parts[2]},
			map[string]any{"parts": parts}, inputs...)
		dead := map[*ir.Node]bool{}
		for i, p := range proj {
			replaceUses(g, p, addView(g, qkv, i))
			dead[p] = true
		}
		removeNodes(g, dead)
		changed = true
	}
	if changed {
		restoreOrder(g)
	}
	return nil
}

// projection finds the linear behind an attention input, looking through
// a rope; nil when there is none.
func projection(n *ir.Node) *ir.Node {
	if n.Op == ir.OpRoPE {
		n = n.Inputs[0]
	}
	if n.Op != ir.OpLinear {
		return nil
	}
	return n
}

// fusableQKV: three distinct linears of one input, all with biases or none.
func fusableQKV(p [3]*ir.Node) bool {
	if p[0] == nil || p[1] == nil || p[2] == nil || p[0] == p[1] || p[1] == p[2] || p[0] == p[2] {
		return false
	}
	x := p[0].Inputs[0]
	for _, l := range p {
		if l.Inputs[0] != x || len(l.Inputs) != len(p[0].Inputs) {
			return false
		}
	}
	return true
}

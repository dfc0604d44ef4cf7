package passes

import "github.com/llama-orch/orc/ir"

// fuseQKV turns the three projections feeding one attention into one
// qkv(x, wq, wk, wv [, bq, bk, bv]) node with parts [q, k, v] and a view per
// part: one kernel reads x once for all three. Two forms fuse:
//   - linear(x, wq), linear(x, wk), linear(x, wv) of the same x, each maybe
//     through a rope, and q and k maybe through a per-head norm before it
//     (head_rmsnorm: Qwen3's and Gemma 3's q/k norm). Biases move with their
//     weights; projections with some but not all biases stay unfused.
//   - phi3's and gpt2's packed attn_qkv: split{parts=[q,k,v]}(linear(x, w
//     [, b])) read by the attention through views (and ropes). The weight
//     and bias become three row ranges of the one stored tensor
//     (weight rows=[first, count]), so the qkv kernel and the rope fold
//     apply as to separate weights, and weights.bin still holds it once.
func fuseQKV(g *ir.Graph) error {
	changed := false
	use := users(g)
	for _, a := range g.Nodes {
		if a.Op != ir.OpAttention {
			continue
		}
		if s := packedProjection(a, use); s != nil {
			fusePacked(g, s, use)
			changed = true
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
// a rope and a per-head norm; nil when there is none.
func projection(n *ir.Node) *ir.Node {
	n = behindRoPE(n)
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

// packedProjection returns the split behind attention a's q, k and v when
// they are its parts 0, 1 and 2 (each maybe through a rope) and the split
// cuts a linear of weight nodes that nothing else reads; nil otherwise.
func packedProjection(a *ir.Node, use map[*ir.Node][]*ir.Node) *ir.Node {
	var s *ir.Node
	for i := range 3 {
		v := behindRoPE(a.Inputs[i])
		if v.Op != ir.OpView || v.Int("part") != int64(i) || v.Inputs[0].Op != ir.OpSplit {
			return nil
		}
		if s == nil {
			s = v.Inputs[0]
		} else if v.Inputs[0] != s {
			return nil
		}
	}
	l := s.Inputs[0]
	if len(s.Ints("parts")) != 3 || l.Op != ir.OpLinear || len(use[l]) != 1 {
		return nil
	}
	for _, w := range l.Inputs[1:] {
		if w.Op != ir.OpWeight {
			return nil
		}
	}
	return s
}

// fusePacked replaces split s of linear(x, w [, b]) by qkv(x, w rows q, w
// rows k, w rows v [, b rows q, k, v]); the split's views read the qkv,
// whose parts are the split's. The whole weight and bias nodes go too
// when the linear was their only reader.
func fusePacked(g *ir.Graph, s *ir.Node, use map[*ir.Node][]*ir.Node) {
	l := s.Inputs[0]
	parts := s.Ints("parts")
	inputs := []*ir.Node{l.Inputs[0]}
	dead := map[*ir.Node]bool{s: true, l: true}
	for _, w := range l.Inputs[1:] {
		inputs = append(inputs, rowRanges(g, w, parts)...)
		if len(use[w]) == 1 {
			dead[w] = true
		}
	}
	qkv := g.Add(ir.OpQKV, ir.F32, s.Shape, map[string]any{"parts": append([]int64(nil), parts...)}, inputs...)
	replaceUses(g, s, qkv)
	removeNodes(g, dead)
}

// rowRanges cuts weight w's first dimension into consecutive row ranges of
// the given counts: one weight node each, of w's tensor (a range of a range
// counts from the tensor's start).
func rowRanges(g *ir.Graph, w *ir.Node, counts []int64) []*ir.Node {
	first, _, _ := w.RowRange()
	ranges := make([]*ir.Node, len(counts))
	for i, c := range counts {
		attrs := map[string]any{"rows": []int64{first, c}}
		for k, v := range w.Attrs {
			if k != "rows" {
				attrs[k] = v
			}
		}
		shape := append(ir.Shape{c}, w.Shape[1:]...)
		ranges[i] = g.Add(ir.OpWeight, w.DType, shape, attrs)
		first += c
	}
	return ranges
}

// behindRoPE is what an attention input rotates and normalises: n looked
// through a rope, then through a head_rmsnorm.
func behindRoPE(n *ir.Node) *ir.Node {
	if n.Op == ir.OpRoPE {
		n = n.Inputs[0]
	}
	if n.Op == ir.OpHeadRMSNorm {
		n = n.Inputs[0]
	}
	return n
}

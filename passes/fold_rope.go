package passes

import (
	"strings"

	"github.com/llama-orch/orc/ir"
)

// foldRoPE moves the ropes of a qkv node's q and k parts into the qkv
// kernel's epilogue: the qkv node takes the ropes' attributes (rope_mode,
// heads, kv_heads, head_dim, rot_dim, base, yarn_*, freq_*; see ir.OpQKV)
// and the positions input, and its parts 0 and 1 come out roped. That saves
// two kernels and a round trip of q and k through memory per layer. It
// folds only when each of the two parts is read by exactly one rope and
// nothing else, and the two ropes agree on everything but their head count.
// Where a per-head norm sits between a part and its rope (a q/k norm), the
// rotation cannot come out of the qkv kernel, whose threads see no whole
// head: the norm and the rope become one norm_rope instead.
func foldRoPE(g *ir.Graph) error {
	foldNormRoPE(g)
	use := users(g)
	views := map[*ir.Node][]*ir.Node{} // packed node → its views
	for _, n := range g.Nodes {
		if n.Op == ir.OpView {
			views[n.Inputs[0]] = append(views[n.Inputs[0]], n)
		}
	}
	dead := map[*ir.Node]bool{}
	for _, qkv := range g.Nodes {
		if qkv.Op != ir.OpQKV || qkv.Attrs["rope_mode"] != nil {
			continue
		}
		q, qRope := soleRope(views[qkv], 0, use)
		k, kRope := soleRope(views[qkv], 1, use)
		if qRope == nil || kRope == nil || !sameRotation(qRope, kRope) {
			continue
		}
		for key, v := range qRope.Attrs {
			if key == "mode" {
				key = "rope_mode"
			}
			qkv.Attrs[key] = v
		}
		qkv.Attrs["kv_heads"] = kRope.Attrs["heads"]
		qkv.Inputs = append(qkv.Inputs, qRope.Inputs[1])
		replaceUses(g, qRope, q)
		replaceUses(g, kRope, k)
		dead[qRope], dead[kRope] = true, true
	}
	if len(dead) > 0 {
		removeNodes(g, dead)
		restoreOrder(g) // positions must precede the qkv that now reads them
	}
	return nil
}

// soleRope returns the one view of part and the rope that is its only
// reader, or nils.
func soleRope(views []*ir.Node, part int64, use map[*ir.Node][]*ir.Node) (view, rope *ir.Node) {
	for _, v := range views {
		if v.Int("part") != part {
			continue
		}
		if view != nil {
			return nil, nil // two views of one part: CSE did not run
		}
		view = v
	}
	if view == nil || len(use[view]) != 1 || use[view][0].Op != ir.OpRoPE || use[view][0].Inputs[0] != view {
		return nil, nil
	}
	return view, use[view][0]
}

// sameRotation: the two ropes read the same positions, carry only
// attributes qkv knows how to apply, and differ at most in their head count.
func sameRotation(q, k *ir.Node) bool {
	if q.Inputs[1] != k.Inputs[1] || len(q.Attrs) != len(k.Attrs) {
		return false
	}
	for key, v := range q.Attrs {
		if !foldableRoPEAttr(key) {
			return false
		}
		kv, ok := k.Attrs[key]
		if !ok || key != "heads" && ir.FormatAttr(v) != ir.FormatAttr(kv) {
			return false
		}
	}
	return true
}

// foldableRoPEAttr lists the rope attributes ir.OpQKV documents.
func foldableRoPEAttr(key string) bool {
	switch key {
	case "mode", "heads", "head_dim", "rot_dim", "base", "freq_scale", "freq_factors":
		return true
	}
	return strings.HasPrefix(key, "yarn_")
}

// foldNormRoPE makes each rope of a head_rmsnorm that nothing else reads one
// norm_rope node: one kernel and one round trip of q or k fewer.
func foldNormRoPE(g *ir.Graph) {
	use := users(g)
	dead := map[*ir.Node]bool{}
	for _, r := range g.Nodes {
		if r.Op != ir.OpRoPE || r.Inputs[0].Op != ir.OpHeadRMSNorm || len(use[r.Inputs[0]]) != 1 {
			continue
		}
		norm := r.Inputs[0]
		attrs := map[string]any{"eps": norm.Attrs["eps"]}
		for k, v := range r.Attrs {
			attrs[k] = v
		}
		nr := g.Add(ir.OpNormRoPE, ir.F32, r.Shape, attrs, norm.Inputs[0], norm.Inputs[1], r.Inputs[1])
		replaceUses(g, r, nr)
		dead[r], dead[norm] = true, true
	}
	if len(dead) > 0 {
		removeNodes(g, dead)
		restoreOrder(g)
	}
}

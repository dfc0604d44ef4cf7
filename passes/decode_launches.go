package passes

import "github.com/llama-orch/orc/ir"

// decodeLaunches is what the passes that overlap decode grids
// (chooseLateStarts, chooseEarlyResiduals) know of the launches
// codegen/cuda emits for each node in decode, in node order: whether a node
// launches at all, whether it quantizes its input first, and whether a
// launch of its waits for the grid before it in its wrapper. All three
// follow from earlier records (kernel, fold_norm, row_in_place,
// router_logits, stages_x) and the int16 scratch's walk (quantizingX);
// codegen/cuda refuses an overlap record these facts got wrong.
type decodeLaunches struct {
	users     map[*ir.Node][]*ir.Node
	quantizes map[*ir.Node]bool // quantizingX
}

func newDecodeLaunches(g *ir.Graph, gpu GPU) decodeLaunches {
	return decodeLaunches{users: users(g), quantizes: quantizingX(g, gpu)}
}

// none reports whether n launches nothing in decode: an input, weight or
// view, a last row in place (row_in_place), a norm its reader folds in, a
// q/k norm_rope its attention folds in (fold_qk_norm).
func (d decodeLaunches) none(n *ir.Node) bool {
	switch n.Op {
	case ir.OpInput, ir.OpWeight, ir.OpView:
		return true
	case ir.OpLast:
		return n.Bool("row_in_place")
	case ir.OpNormRoPE:
		return QKNormFolded(n, d.users)
	}
	return normFolded(n, d.users)
}

// waitsInWrapper reports whether a decode launch of n waits for the grid
// before it in its wrapper (wrappers.cu.tmpl): its quantize_x8, and every
// launch but those whose device function waits (codegen/cuda's
// waitsInside): a matrix node's integer-path kernel, the attend_decode of
// an attention whose k and v its qkv kernel or itself (fold_qk_norm)
// stores, a router norm's
// rmsnorm_logits.
func (d decodeLaunches) waitsInWrapper(n *ir.Node) bool {
	switch {
	case d.none(n):
		return false
	case d.quantizes[n]:
		return true
	case isMatrix(n) && (n.Str("kernel") == ir.KernelQ8 || n.Str("kernel") == ir.KernelMMA):
		return false
	case n.Op == ir.OpAttention && (qkvStoresKV(n) || n.Bool("fold_qk_norm") || n.Bool("fold_kv_store")):
		return false
	}
	return !n.Bool("router_logits")
}

// qkvStoresKV reports whether attention a's k and v are parts 1 and 2 of
// one qkv of the step's tokens, whose decode kernel then stores them in the
// cache itself (the attention launches no kv_store): fp16 caches only.
func qkvStoresKV(a *ir.Node) bool {
	k, v := a.Inputs[1], a.Inputs[2]
	if ir.KVQ8(a) || k.Op != ir.OpView || v.Op != ir.OpView || k.Int("part") != 1 || v.Int("part") != 2 || k.Inputs[0] != v.Inputs[0] {
		return false
	}
	q := k.Inputs[0]
	parts, kv := q.Ints("parts"), a.Int("kv_heads")*a.Int("head_dim")
	x := q.Inputs[0]
	return q.Op == ir.OpQKV && len(parts) == 3 && parts[1] == kv && parts[2] == kv && len(x.Shape) > 0 && x.Shape[0] == ir.T
}

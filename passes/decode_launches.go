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
	case n.Op == ir.OpAttention && (ir.QKVStoresKV(n) || n.Bool("fold_qk_norm") || n.Bool("fold_kv_store")):
		return false
	}
	return !n.Bool("router_logits")
}

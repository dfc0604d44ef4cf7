package passes

import "github.com/llama-orch/orc/ir"

// chooseQKNormFolds decides, for a GPU target, which attentions fold their
// q and k per-head norms, their RoPE and their kv store into their decode
// kernel (fold_qk_norm, ir/qk_norm_fold.go), and records it on them: an
// attention with a decode geometry whose q and k are norm_ropes of one
// qkv's raw parts over whole heads and whose v is that qkv's part 2
// (ir.QKNormInputs), which no other node reads, of at most
// ir.MaxQKNormGroup query heads a kv head (one block's 16 rows hold the
// step's group). attend_decode then normalizes and rotates its q heads in
// its prologue, after its wait, and the block holding the step's position
// does the same for its kv head's new key and stores it and the new value
// in the cache before copying the step's key tiles: the two norm_ropes and
// the kv store, three launches a layer, launch nothing in decode, and the
// raw parts stay alive to the attention (readsOf). A prefill and a
// batched step keep those launches. An attention of an 8-bit cache folds
// its kv store alone (fold_kv_store): attend_decode quantizes and stores
// the step's k and v. Else, where its k and v are one qkv's parts of an
// fp16 cache (ir.QKVStoring), that qkv's kernels store them
// (qkv_stores_kv): the decode kernel's epilogue, a prefill's
// qkv_rope_store.
func chooseQKNormFolds(g *ir.Graph) error {
	if _, err := graphGPU(g); err != nil {
		return err
	}
	readers := users(g)
	for _, n := range g.Nodes {
		if n.Op != ir.OpAttention {
			continue
		}
		delete(n.Attrs, "fold_qk_norm")
		delete(n.Attrs, "fold_kv_store")
		delete(n.Attrs, "qkv_stores_kv")
		switch {
		case qkNormFoldable(n, readers):
			n.Attrs["fold_qk_norm"] = true
		case ir.KVQ8(n) && n.Attrs["decode_splits"] != nil:
			n.Attrs["fold_kv_store"] = true
		case ir.QKVStoring(n):
			n.Attrs["qkv_stores_kv"] = true
		}
	}
	return nil
}

// qkNormFoldable reports whether attention a can fold its q/k norms in
// decode (chooseQKNormFolds): not with an 8-bit cache, whose rows
// attend_decode's fold does not store.
func qkNormFoldable(a *ir.Node, readers map[*ir.Node][]*ir.Node) bool {
	qn, kn, _ := ir.QKNormInputs(a)
	if qn == nil || ir.KVQ8(a) || a.Attrs["decode_splits"] == nil || a.Int("heads")/a.Int("kv_heads") > ir.MaxQKNormGroup {
		return false
	}
	return len(readers[qn]) == 1 && len(readers[kn]) == 1
}

// QKNormFolded reports whether norm_rope n launches nothing in decode: the
// attention reading it folds it in (fold_qk_norm). readers maps a node to
// its readers.
func QKNormFolded(n *ir.Node, readers map[*ir.Node][]*ir.Node) bool {
	if n.Op != ir.OpNormRoPE || len(readers[n]) != 1 {
		return false
	}
	a := readers[n][0]
	return a.Bool("fold_qk_norm")
}

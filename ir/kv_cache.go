package ir

import "fmt"

// kv_cache, on an attention, is how its layer's keys and values are
// cached: absent for fp16, KVCacheQ8 for int8 codes with one f32 scale per
// (position, kv head), the row's largest |x| over 127, so x ≈ code·scale
// (plans.KVCacheQ8 lays the rows out). The compiler sets it on every
// attention of a graph alike; the decode's qkv kernels and folded q/k
// norms store fp16 rows only, so with it the attention stores its own.
const kvCache = "kv_cache"

// fold_kv_store, which a GPU target's pass (passes, chooseQKNormFolds)
// records on an attention of an 8-bit cache with a decode geometry: in
// decode its kernel (attend_decode) quantizes the step's k and v and
// stores them in the cache itself (the block holding the step's position),
// so no kv_store launches and the cached keys' copies start before its
// wait.
const foldKVStore = "fold_kv_store"

// qkv_stores_kv, which a GPU target's pass (passes, chooseQKNormFolds)
// records on an attention whose k and v are parts 1 and 2 of one qkv of
// the step's tokens, each kv_heads·head_dim wide, with an fp16 cache: that
// qkv's kernels store them in the cache (the decode kernel's epilogue, or
// a prefill's qkv_rope_store), so the attention launches no kv_store. Not
// in a batched step, whose pool a kv_store_paged fills.
const qkvStoresKV = "qkv_stores_kv"

// QKVStoresKV reports whether attention n's k and v are stored by the qkv
// kernels of its step's tokens (qkv_stores_kv).
func QKVStoresKV(n *Node) bool { return n.Bool(qkvStoresKV) }

// QKVStoring reports whether attention n's k and v may be stored by the
// qkv that computes them (qkv_stores_kv's condition): parts 1 and 2 of
// one qkv of the step's tokens, kv_heads·head_dim wide each, an fp16
// cache.
func QKVStoring(n *Node) bool {
	k, v := n.Inputs[1], n.Inputs[2]
	if KVQ8(n) || k.Op != OpView || v.Op != OpView || k.Int("part") != 1 || v.Int("part") != 2 || k.Inputs[0] != v.Inputs[0] {
		return false
	}
	q := k.Inputs[0]
	parts, kv := q.Ints("parts"), n.Int("kv_heads")*n.Int("head_dim")
	x := q.Inputs[0]
	return q.Op == OpQKV && len(parts) == 3 && parts[1] == kv && parts[2] == kv && len(x.Shape) > 0 && x.Shape[0] == T
}

// KVCacheQ8 is the kv_cache of an 8-bit cache.
const KVCacheQ8 = "q8"

// KVQ8 reports whether attention n caches int8 codes and scales.
func KVQ8(n *Node) bool { return n.Str(kvCache) == KVCacheQ8 }

// KVCacheOf is g's KV cache format: its attentions' kv_cache ("" for fp16).
func KVCacheOf(g *Graph) string {
	for _, n := range g.Nodes {
		if n.Op == OpAttention {
			return n.Str(kvCache)
		}
	}
	return ""
}

// verifyKVCache checks that every attention of g caches alike, in a format
// known.
func verifyKVCache(g *Graph) error {
	first, seen := "", false
	for _, n := range g.Nodes {
		if n.Op != OpAttention {
			continue
		}
		k := n.Str(kvCache)
		if n.Bool(foldKVStore) && (k != KVCacheQ8 || n.Attrs["decode_splits"] == nil || n.Bool(foldQKNorm)) {
			return fmt.Errorf("attention %%%d: %s needs an 8-bit cache, a decode geometry and no %s", n.ID, foldKVStore, foldQKNorm)
		}
		if n.Bool(qkvStoresKV) && (!QKVStoring(n) || n.Bool(foldKVStore) || n.Bool(foldQKNorm)) {
			return fmt.Errorf("attention %%%d: %s, but its k and v are not an fp16 cache's parts 1 and 2 of one qkv of the step's tokens, or it folds its store", n.ID, qkvStoresKV)
		}
		if k != "" && k != KVCacheQ8 {
			return fmt.Errorf("attention %%%d: kv_cache %q: want absent (fp16) or %q", n.ID, k, KVCacheQ8)
		}
		if seen && k != first {
			return fmt.Errorf("attention %%%d: kv_cache %q where an earlier attention's is %q: one cache format a graph", n.ID, k, first)
		}
		first, seen = k, true
	}
	return nil
}

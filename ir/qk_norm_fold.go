package ir

import (
	"fmt"
	"reflect"
	"slices"
)

// fold_qk_norm, which a GPU target's pass (passes, chooseQKNormFolds)
// records on an attention whose q and k are per-head normed and rotated
// between their projection and the attention (Qwen3's and Gemma 3's q/k
// norm): in decode its kernel (attend_decode) normalizes and rotates its q
// heads from the qkv's raw part 0 itself, the block holding the step's
// position normalizes and rotates the step's k from part 1 and stores it,
// with part 2's v, in the cache, so the two norm_ropes and the kv store
// launch nothing. A prefill and a batched step keep their launches.
const foldQKNorm = "fold_qk_norm"

// MaxQKNormGroup bounds the query heads a kv head may have where fold_qk_norm
// holds: attend_decode's block of 16 rows holds the step's whole group.
const MaxQKNormGroup = 16

// QKNormInputs are the q and k norm_ropes attention a reads and the qkv
// whose parts they and a's v are: a's q and k norm_ropes of the qkv's
// parts 0 and 1 (views), rotating whole heads (rot_dim = head_dim) of a's
// head_dim alike (normRoPEAttrs equal: one norm and one RoPE config serve
// both), a's v its part 2. nil where a reads anything else.
func QKNormInputs(a *Node) (qn, kn, qkv *Node) {
	if a.Op != OpAttention || len(a.Inputs) != 3 {
		return nil, nil, nil
	}
	qn, kn, v := a.Inputs[0], a.Inputs[1], a.Inputs[2]
	if qn.Op != OpNormRoPE || kn.Op != OpNormRoPE || v.Op != OpView || v.Int("part") != 2 {
		return nil, nil, nil
	}
	qkv = v.Inputs[0]
	hd := a.Int("head_dim")
	for part, n := range []*Node{qn, kn} {
		x := n.Inputs[0]
		if x.Op != OpView || x.Int("part") != int64(part) || x.Inputs[0] != qkv || n.Int("head_dim") != hd || n.Int("rot_dim") != hd {
			return nil, nil, nil
		}
	}
	if !equalAttrs(qn.Attrs, kn.Attrs, normRoPEAttrs) {
		return nil, nil, nil
	}
	if qkv.Op != OpQKV {
		return nil, nil, nil
	}
	return qn, kn, qkv
}

// verifyQKNormFolds checks each fold_qk_norm: on an attention with a decode
// geometry that reads QKNormInputs, no norm_rope of which another node
// reads (it computes nothing in decode), of at most MaxQKNormGroup query
// heads a kv head.
func verifyQKNormFolds(g *Graph) error {
	readers := map[*Node]int{}
	for _, n := range g.Nodes {
		for _, in := range slices.Compact(slices.Clone(n.Inputs)) {
			readers[in]++
		}
	}
	for _, o := range g.Outputs {
		readers[o]++
	}
	for _, n := range g.Nodes {
		if !n.Bool(foldQKNorm) {
			continue
		}
		if KVQ8(n) {
			return fmt.Errorf("%%%d attention: %s with an 8-bit cache (its kernel stores fp16 rows)", n.ID, foldQKNorm)
		}
		qn, kn, _ := QKNormInputs(n)
		switch {
		case qn == nil:
			return fmt.Errorf("%%%d %s: %s, but it does not read q and k norm_ropes of one qkv's parts over whole heads and that qkv's v", n.ID, n.Op, foldQKNorm)
		case n.Attrs["decode_splits"] == nil:
			return fmt.Errorf("%%%d attention: %s without a decode geometry", n.ID, foldQKNorm)
		case n.Int("heads")/n.Int("kv_heads") > MaxQKNormGroup:
			return fmt.Errorf("%%%d attention: %s with %d query heads a kv head, more than %d", n.ID, foldQKNorm, n.Int("heads")/n.Int("kv_heads"), MaxQKNormGroup)
		case readers[qn] != 1 || readers[kn] != 1:
			return fmt.Errorf("%%%d attention: %s, but its norm_ropes %%%d, %%%d have other readers", n.ID, foldQKNorm, qn.ID, kn.ID)
		}
	}
	return nil
}

// normRoPEAttrs are the attributes of a norm_rope that its norm and RoPE
// configs follow: all but heads and what the passes record (offset, ...).
var normRoPEAttrs = []string{"eps", "mode", "head_dim", "rot_dim", "base", "freq_scale", "freq_factors", "yarn_factor", "yarn_orig_ctx",
	"yarn_beta_fast", "yarn_beta_slow"}

// equalAttrs reports whether a and b have the same keys (present or absent
// alike, equal values).
func equalAttrs(a, b map[string]any, keys []string) bool {
	for _, k := range keys {
		v, ok := a[k]
		if w, has := b[k]; ok != has || !reflect.DeepEqual(v, w) {
			return false
		}
	}
	return true
}

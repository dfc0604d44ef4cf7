package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// Attention kernels (templates/attention.cu.tmpl): a block is attWarps
// warps of 16 query rows each on tensor cores; the prefill takes 64 rows a
// block and K/V tiles of 64 keys, the decode 16 rows a block and tiles of
// 32 keys per warp, split over the keys (flash-decoding) as the node's
// decode geometry says (passes.DecodeAttention).
const (
	attWarps   = passes.DecodeAttnWarps
	decodeRows = 16
)

// kvArgs are the K and V cache arguments of attention node n's layer
// (plans.ArgKV: the base at ctx = 1, which the runtime scales by ctx).
func kvArgs(n *ir.Node) (kc, vc plans.Arg) {
	row := kvRowBytes(n) // one cached row
	layer := n.Int("layer")
	return plans.Arg{Kind: plans.ArgKV, Offset: (layer*2 + 0) * row}, plans.Arg{Kind: plans.ArgKV, Offset: (layer*2 + 1) * row}
}

// kvRowBytes is one position's cached K (or V) row of attention n's layer
// (plans.Model.KVRowBytes).
func kvRowBytes(n *ir.Node) int64 {
	m := plans.Model{NHeadKV: int(n.Int("kv_heads")), HeadDim: int(n.Int("head_dim"))}
	if ir.KVQ8(n) {
		m.KVCache = plans.KVCacheQ8
	}
	return m.KVRowBytes()
}

// attnConfig is attention n's config (A in attention.cu.tmpl).
func (e *emitter) attnConfig(n *ir.Node) string {
	kv8 := 0
	if ir.KVQ8(n) {
		kv8 = 1
	}
	return e.kernels.config("Attn",
		fmt.Sprintf("static constexpr int HEADS = %d, KVH = %d, HD = %d, WINDOW = %d, KV8 = %d, KVROW = %d;",
			n.Int("heads"), n.Int("kv_heads"), n.Int("head_dim"), n.Int("window"), kv8, kvRowBytes(n)),
		"static constexpr float SCALE = "+cFloat(n.Float("scale"))+";")
}

// kvStoreGrid is kv_store's and kv_store_paged's grid for attention n of
// kvh kv heads of hd dims, per token: for fp16 rows a thread every per
// elements, for an 8-bit cache a warp a kv head.
func kvStoreGrid(n *ir.Node, kvh, hd, per int64) grid {
	if ir.KVQ8(n) {
		return gridElems(0, kvh*32, 256)
	}
	return gridElems(0, kvh*hd/per, 256)
}

// decodeShape is a decode attention's grid, splits × kv heads × row groups
// (ceil(G/16) for the G query heads of a kv head at T = 1), the splits in
// clusters of cluster blocks, each warp's tiles in flight (stages) and the
// fewest keys a split takes (minKeys).
type decodeShape struct {
	splits, kvh, groups, hd, cluster, stages, minKeys int64
	kv8                                               bool // an 8-bit cache's tiles
}

// decodeShapeOf is the decode geometry attention node n records
// (passes.chooseDecodeAttention), refused where the target has no
// clusters and it asks for them.
func (t tuning) decodeShapeOf(n *ir.Node) (decodeShape, error) {
	if _, ok := n.Attrs["decode_splits"]; !ok {
		return decodeShape{}, fmt.Errorf("attention %%%d has no decode geometry (decode_splits, ...): the GPU passes choose it", n.ID)
	}
	kvh := n.Int("kv_heads")
	d := decodeShape{splits: n.Int("decode_splits"), kvh: kvh, groups: ceilDiv(n.Int("heads")/kvh, decodeRows), hd: n.Int("head_dim"),
		cluster: n.Int("decode_cluster"), stages: n.Int("decode_stages"), minKeys: n.Int("decode_min_keys"), kv8: ir.KVQ8(n)}
	if d.cluster > 1 && t.DecodeAttnCluster < d.cluster {
		return decodeShape{}, fmt.Errorf("attention %%%d: decode clusters of %d on %s, which takes at most %d", n.ID, d.cluster, t.Arch, t.DecodeAttnCluster)
	}
	return d, nil
}

// partBytes is the decode's partial results, one per cluster: o [groups]
// [clusters][16][HD] floats, then (m, l) [groups][clusters][16] float pairs.
func (d decodeShape) partBytes() int64 {
	return d.kvh * d.groups * (d.splits / d.cluster) * decodeRows * (4*d.hd + 8)
}

// counters is the decode's arrival counters: one per kv head, row group and
// cluster rank.
func (d decodeShape) counters() int64 { return d.kvh * d.groups * d.cluster }

// smem is the decode's dynamic shared memory: each warp's ring of K and V
// tiles, later the warps' rows (o, m, l), their weights in the block's
// rows, the block's rows and (m, l), the owned rows' (m, l) and the
// cluster merge's weights (attend_decode's layout).
func (d decodeShape) smem() int64 {
	hdp := paddedHD(d.hd)
	tiles := d.stages * passes.DecodeAttnStageBytes(d.hd, d.kv8)
	merge := (attWarps*decodeRows*(hdp+4) + 3*attWarps*decodeRows + decodeRows*(hdp+4) + 4*decodeRows + decodeRows*d.cluster) * 4
	return max(tiles, merge)
}

// paddedHD is the tensor-core tiles' width: head_dim rounded up to 16.
func paddedHD(hd int64) int64 { return ceilDiv(hd, 16) * 16 }

// attnScratch is the arena the decode attentions share after the planned
// buffers: the partials of the largest, and one arrival counter per (kv
// head, row group, cluster rank), zero between launches (the arena starts
// zeroed and the last block to arrive resets it).
type attnScratch struct{ part, counters, end int64 }

func (t tuning) newAttnScratch(g *ir.Graph, base int64) (attnScratch, error) {
	var part, counters int64
	for _, n := range g.Nodes {
		if n.Op == ir.OpAttention && n.Int("kv_heads") > 0 {
			d, err := t.decodeShapeOf(n)
			if err != nil {
				return attnScratch{}, err
			}
			part, counters = max(part, d.partBytes()), max(counters, 4*d.counters())
		}
	}
	cnt := base + alignUp(part, plans.Alignment)
	return attnScratch{part: base, counters: cnt, end: cnt + alignUp(counters, plans.Alignment)}, nil
}

// attention(q, k, v [, sinks]): store this step's k, v in the layer's cache
// (unless the qkv kernel did), then attend_prefill or attend_decode.
func (e *emitter) attention(n *ir.Node) ([]plans.Launch, error) {
	q, k, v := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	heads, kvh, hd := n.Int("heads"), n.Int("kv_heads"), n.Int("head_dim")
	layer := n.Int("layer")
	if heads < 1 || kvh < 1 || heads%kvh != 0 || hd < 8 || hd%8 != 0 || hd > 256 {
		return nil, fmt.Errorf("heads %d, kv_heads %d, head_dim %d out of range (head_dim a multiple of 8 up to 256)", heads, kvh, hd)
	}
	for i, want := range []int64{heads * hd, kvh * hd, kvh * hd} {
		if cols, err := activation(n.Inputs[i]); err != nil || cols != want || rowsOf(n.Inputs[i]) != 0 {
			return nil, fmt.Errorf("input %d is %v, want [T, %d]: attention runs on this step's tokens", i, n.Inputs[i].Shape, want)
		}
	}
	if e.model.NHeadKV != 0 && (int64(e.model.NHeadKV) != kvh || int64(e.model.HeadDim) != hd || layer >= int64(e.model.NLayer)) {
		return nil, fmt.Errorf("layer %d's cache [%d·%d] does not fit the plan's KV layout (%d layers of %d·%d)",
			layer, kvh, hd, e.model.NLayer, e.model.NHeadKV, e.model.HeadDim)
	}
	if layer < 0 {
		return nil, fmt.Errorf("negative layer %d", layer)
	}
	if ir.KVQ8(n) && hd%16 != 0 {
		return nil, fmt.Errorf("an 8-bit KV cache needs head_dim a multiple of 16, not %d", hd)
	}
	cfg := e.attnConfig(n)
	if e.batching {
		return e.attendPaged(n, cfg)
	}
	kc, vc := kvArgs(n)
	positions := plans.Arg{Kind: plans.ArgState, Offset: e.state.Positions}
	fold := !e.prefill && n.Bool("fold_qk_norm")     // attend_decode norms, rotates and stores
	storeQ8 := !e.prefill && n.Bool("fold_kv_store") // attend_decode stores (an 8-bit cache)

	var ls []plans.Launch
	var err error
	if !ir.QKVStoresKV(n) && !fold && !storeQ8 { // else the qkv kernel, or attend_decode, stored k and v
		store := &call{}
		store.ptr(e, cIn, "k", k)
		store.ptr(e, cIn, "v", v)
		store.arg(cInts, "positions", positions)
		store.arg(cCache, "kc", kc)
		store.arg(cCache, "vc", vc)
		e.stateArg(store)
		if ls, err = e.emit(store, "kv_store", 256, kvStoreGrid(n, kvh, hd, 1), configArgs{cfg}); err != nil {
			return nil, err
		}
	}

	att := &call{}
	var qk string
	if fold {
		if qk, err = e.foldQKNorm(att, n); err != nil {
			return nil, err
		}
	} else {
		att.ptr(e, cIn, "q", q)
		switch {
		case storeQ8: // kn, vn: the step's k, v it stores; no norms
			att.ptr(e, cIn, "kn", k)
			att.ptr(e, cIn, "vn", v)
			att.null()
			att.null()
			qk = "QKStore"
		case !e.prefill:
			for range 4 { // kn, vn, qw, kw: attend_decode's folded q/k norms
				att.null()
			}
		}
	}
	att.arg(cCache, "kc", kc)
	att.arg(cCache, "vc", vc)
	sinks, err := e.sinks(att, n, heads)
	if err != nil {
		return nil, err
	}
	att.arg(cInts, "positions", positions)
	att.ptr(e, cOut, "y", n)
	q8 := false
	if hd%32 == 0 {
		q8 = e.quantizes(att, n, n, heads*hd)
	} else {
		att.null()
		att.null()
	}
	targs := attendArgs{A: cfg, S: sinks, Sinks: len(n.Inputs) == 4, Q8: q8}
	var la []plans.Launch
	if e.prefill {
		la, err = e.attendPrefill(att, n, targs)
	} else {
		d, err := e.decodeShapeOf(n)
		if err != nil {
			return nil, err
		}
		att.arg(cOut, "part", plans.Arg{Kind: plans.ArgArena, Offset: e.attn.part})
		att.arg("int* __restrict__", "counters", plans.Arg{Kind: plans.ArgArena, Offset: e.attn.counters})
		e.stateArg(att)
		g := grid{b: [3]int64{d.splits, kvh, d.groups}}
		att.cluster = d.cluster
		la, err = e.emit(att, "attend_decode", attWarps*32, g,
			attendDecodeArgs{attendArgs: targs, Splits: d.splits, Cluster: d.cluster, Stages: d.stages, MinKeys: d.minKeys, QK: qk})
		if err == nil {
			la[0].Smem = int(d.smem())
		}
	}
	return append(ls, la...), err
}

// sinks adds attention node n's optional sinks (its fourth input, one per
// query head) to c and returns their accessor, B_none without them.
func (e *emitter) sinks(c *call, n *ir.Node, heads int64) (accessor, error) {
	if len(n.Inputs) < 4 {
		c.null()
		return noWeight, nil
	}
	acc, err := e.vectorAccessor(n.Inputs[3], heads)
	c.ptr(e, cWeight, "sinks", n.Inputs[3])
	return acc, err
}

// foldQKNorm adds to c what attend_decode reads where attention n folds its
// q/k norms, RoPE and kv store in (fold_qk_norm, the chooseQKNormFolds
// pass): the qkv's raw parts q, k and v and the norms' weights, and
// returns its QK template argument (QKNorm, attention.cu.tmpl).
func (e *emitter) foldQKNorm(c *call, n *ir.Node) (string, error) {
	qn, kn, _ := ir.QKNormInputs(n)
	if qn == nil {
		return "", fmt.Errorf("attention %%%d records fold_qk_norm, but does not read q and k norm_ropes of one qkv", n.ID)
	}
	hd := n.Int("head_dim")
	r, err := e.ropeConfig(qn, qn.Str("mode"))
	if err != nil {
		return "", err
	}
	wq, err := e.vectorAccessor(qn.Inputs[1], hd)
	if err != nil {
		return "", err
	}
	wk, err := e.vectorAccessor(kn.Inputs[1], hd)
	if err != nil {
		return "", err
	}
	c.ptr(e, cIn, "q", qn.Inputs[0])
	c.ptr(e, cIn, "kn", kn.Inputs[0])
	c.ptr(e, cIn, "vn", n.Inputs[2])
	c.ptr(e, cWeight, "qw", qn.Inputs[1])
	c.ptr(e, cWeight, "kw", kn.Inputs[1])
	return fmt.Sprintf("QKNorm<%s, %s, %s, %s>", r, e.normConfig(qn), wq, wk), nil
}

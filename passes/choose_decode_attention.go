package passes

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
)

// chooseDecodeAttention decides, for the graph's GPU target, the geometry
// of each attention's decode kernel (attend_decode) and records it on the
// node for codegen/cuda (ir/decode_attention.go): ChooseDecodeAttention.
func chooseDecodeAttention(g *ir.Graph) error {
	gpu, err := graphGPU(g)
	if err != nil {
		return err
	}
	return ChooseDecodeAttention(g, gpu)
}

// ChooseDecodeAttention records gpu's DecodeAttention on every attention
// node of g, for the graph's context (its ctx attribute; 0: unknown).
func ChooseDecodeAttention(g *ir.Graph, gpu GPU) error {
	ctx, _ := g.Attrs["ctx"].(int64)
	for _, n := range g.Nodes {
		if n.Op != ir.OpAttention {
			continue
		}
		kvh := n.Int("kv_heads")
		if kvh < 1 || n.Int("heads")%kvh != 0 {
			return fmt.Errorf("attention %%%d: heads %d, kv_heads %d", n.ID, n.Int("heads"), kvh)
		}
		d := gpu.DecodeAttention(n.Int("heads")/kvh, kvh, n.Int("head_dim"), n.Int("window"), ctx)
		n.Attrs["decode_splits"], n.Attrs["decode_cluster"] = d.Splits, d.Cluster
		n.Attrs["decode_stages"], n.Attrs["decode_min_keys"] = d.Stages, d.MinKeys
	}
	return nil
}

// DecodeAttention is an attend_decode geometry (ir/decode_attention.go).
type DecodeAttention struct{ Splits, Cluster, Stages, MinKeys int64 }

// decodeClusterWaves bounds the waves of SMs a decode attention's
// clusters (one a kv head's block) may take: two, so Phi-3-mini's 32 kv
// heads in clusters of 8 (256 blocks on an H200's 132 SMs) merge in
// distributed shared memory (H200, 2026-11-28, its decode alternated in
// one call: 605.5 against 564.3 tok/s at 3,840 tokens of context, 705.0
// and 718.2 against 709.9 and 710.4 short).
const decodeClusterWaves = 2

// maxGlobalPartials bounds the partials a decode attention merges through
// global memory (one a split without clusters, one a cluster with them):
// the last block to arrive reads them all.
const maxGlobalPartials = 64

// DecodeAttention is the geometry of a decode attention of kvh kv heads of
// group query heads each, head_dim hd and sliding window (0: none), in a
// context of ctx keys (0: unknown), an 8-bit cache's as an fp16 one's
// (its tiles take half the ring; more stages of them measured slower):
//
//   - Stages: the most up to DecodeAttnStages whose ring takes at most
//     DecodeAttnSmem, at least one (one at head_dim 64 and above). A
//     small ring keeps a block beside the grid before it, whose tail it
//     overlaps by copying the cached keys before its wait; Phi-3-mini's
//     qkv_mma leaves 90 KiB an SM beside its two blocks.
//   - MinKeys: Stages rounds, so a split's whole share of a context up to
//     Splits·MinKeys keys is in flight before the wait.
//   - Cluster: DecodeAttnCluster where the kv heads' blocks, one cluster
//     each, fit decodeClusterWaves waves of SMs (Qwen2.5-0.5B's 2,
//     gpt-oss's 8, Phi-3-mini's 32 kv heads): the split's merge lies on
//     every step's path, in distributed shared memory within a cluster,
//     not through global memory and a last block's second pass. Else none:
//     with more kv heads clusters only constrain where blocks go.
//   - Splits: DecodeAttnBlocks over the kv heads' blocks, at most
//     maxGlobalPartials partials, no more than the keys a step may attend
//     (the window, the context) fill with MinKeys each, in whole clusters.
func (gpu GPU) DecodeAttention(group, kvh, hd, window, ctx int64) DecodeAttention {
	d := DecodeAttention{Stages: 1, Cluster: 1}
	for s := int64(2); s <= gpu.DecodeAttnStages && s*DecodeAttnStageBytes(hd, false) <= gpu.DecodeAttnSmem; s++ {
		d.Stages = s
	}
	d.MinKeys = d.Stages * ir.DecodeAttnRound
	blocks := kvh * ceilDiv(group, 16)
	cluster := min(gpu.DecodeAttnCluster, ir.MaxDecodeCluster)
	if cluster > 1 && blocks*cluster <= decodeClusterWaves*gpu.SMs {
		d.Cluster = cluster
	}
	d.Splits = min(ceilDiv(gpu.DecodeAttnBlocks, blocks), maxGlobalPartials*d.Cluster, ir.MaxDecodeSplits)
	keys := ctx
	if window > 0 && (keys == 0 || window < keys) {
		keys = window
	}
	if keys > 0 {
		d.Splits = min(d.Splits, ceilDiv(keys, d.MinKeys))
	}
	d.Splits = max(d.Splits, 1)
	d.Cluster = min(d.Cluster, d.Splits)
	d.Splits = d.Splits / d.Cluster * d.Cluster
	return d
}

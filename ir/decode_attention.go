package ir

import "fmt"

// The decode geometry of an attention node, which a GPU target's pass
// (passes, chooseDecodeAttention) records for codegen/cuda's attend_decode:
// decode_splits, the blocks over one step's keys for each kv head's rows;
// decode_cluster, those blocks in thread-block clusters of that many (1:
// none), which merge their splits through distributed shared memory;
// decode_stages, the key tiles each warp keeps in flight; decode_min_keys,
// the fewest keys a split takes.
var decodeAttnAttrs = []string{"decode_splits", "decode_cluster", "decode_stages", "decode_min_keys"}

// DecodeAttnRound is the keys attend_decode's warps take in one round (4
// warps, a tile of 32 keys each): a split's keys are whole rounds.
const DecodeAttnRound = 128

// The limits of a decode geometry: at most MaxDecodeSplits splits (the
// merge's partials are bounded), in clusters of at most MaxDecodeCluster
// (the portable cluster size).
const (
	MaxDecodeSplits  = 128
	MaxDecodeCluster = 8
)

// verifyDecodeAttention checks an attention node's decode geometry, where
// it has one: all four attributes, splits in whole clusters within the
// limits, at least one stage, chunks of whole rounds.
func verifyDecodeAttention(n *Node) error {
	if has, err := attrGroup(n, decodeAttnAttrs, "decode attention geometry", OpAttention); !has || err != nil {
		return err
	}
	splits, cluster := n.Int("decode_splits"), n.Int("decode_cluster")
	stages, keys := n.Int("decode_stages"), n.Int("decode_min_keys")
	switch {
	case cluster < 1 || cluster > MaxDecodeCluster || splits < 1 || splits > MaxDecodeSplits || splits%cluster != 0:
		return fmt.Errorf("decode_splits %d in clusters of %d: want at most %d splits in whole clusters of 1 to %d", splits, cluster, MaxDecodeSplits, MaxDecodeCluster)
	case stages < 1:
		return fmt.Errorf("decode_stages %d < 1", stages)
	case keys < DecodeAttnRound || keys%DecodeAttnRound != 0:
		return fmt.Errorf("decode_min_keys %d: want whole rounds of %d keys", keys, DecodeAttnRound)
	}
	return nil
}

package ir

import "fmt"

// prefillSplitAttrs are the prefill attention's geometry, which a GPU
// target's choosePrefillSplits (passes) records on each attention node:
// the grid's split dimension, the least keys a split takes, the blocks the
// target holds at once and the most partials a step leaves.
var prefillSplitAttrs = []string{"prefill_splits", "prefill_split_keys", "prefill_split_blocks", "prefill_split_parts"}

// verifyPrefillSplits checks that a node records the prefill attention's
// geometry only on an attention, all of it or none, each a positive int64.
func verifyPrefillSplits(n *Node) error {
	has := 0
	for _, k := range prefillSplitAttrs {
		v, ok := n.Attrs[k]
		if !ok {
			continue
		}
		has++
		if i, isInt := v.(int64); !isInt || i < 1 {
			return fmt.Errorf("attr %s = %v, want an int64 ≥ 1", k, v)
		}
	}
	switch {
	case has > 0 && n.Op != OpAttention:
		return fmt.Errorf("%v on a %s: only an attention splits its prefill", prefillSplitAttrs, n.Op)
	case has > 0 && has < len(prefillSplitAttrs):
		return fmt.Errorf("%d of %v: an attention records all of its prefill geometry or none", has, prefillSplitAttrs)
	}
	return nil
}

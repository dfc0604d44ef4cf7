package ir

import (
	"fmt"
	"slices"
)

// prefillSplitAttrs are the prefill attention's geometry, which a GPU
// target's choosePrefillSplits (passes) records on each attention node:
// the grid's split dimension, the least keys a split takes, the blocks the
// target holds at once and the most partials a step leaves.
var prefillSplitAttrs = []string{"prefill_splits", "prefill_split_keys", "prefill_split_blocks", "prefill_split_parts"}

// verifyPrefillSplits checks that a node records the prefill attention's
// geometry only on an attention, all of it or none, each a positive int64.
func verifyPrefillSplits(n *Node) error {
	if has, err := attrGroup(n, prefillSplitAttrs, fmt.Sprint(prefillSplitAttrs), OpAttention); !has || err != nil {
		return err
	}
	for _, k := range prefillSplitAttrs {
		if i, isInt := n.Attrs[k].(int64); !isInt || i < 1 {
			return fmt.Errorf("attr %s = %v, want an int64 ≥ 1", k, n.Attrs[k])
		}
	}
	return nil
}

// attrGroup reports whether n records the attribute group attrs (what:
// its name in errors), which only a node of one of ops records, all of it
// or none.
func attrGroup(n *Node, attrs []string, what string, ops ...Op) (bool, error) {
	has := 0
	for _, k := range attrs {
		if _, ok := n.Attrs[k]; ok {
			has++
		}
	}
	switch {
	case has == 0:
		return false, nil
	case !slices.Contains(ops, n.Op):
		return false, fmt.Errorf("%s on a %s", what, n.Op)
	case has != len(attrs):
		return false, fmt.Errorf("%s: %d of %v", what, has, attrs)
	}
	return true, nil
}

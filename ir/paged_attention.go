package ir

import "fmt"

// The batched-step geometry of an attention node, which a GPU target's
// pass (passes, choosePagedAttention) records for codegen/cuda's
// attend_paged: paged_stages, the key tiles of PagedAttnKeys keys a block
// keeps in flight; paged_splits, the blocks a tile's key tiles are dealt
// to (key tile j to split j mod paged_splits, whatever the step).
var pagedAttnAttrs = []string{"paged_stages", "paged_splits"}

// PagedAttnKeys is attend_paged's key tile (PAGED_KT): a split's keys
// are whole tiles.
const PagedAttnKeys = 64

// MaxPagedStages bounds attend_paged's ring (its shared memory),
// MaxPagedSplits its partials (the batch region holds a tile's splits'
// for every token).
const (
	MaxPagedStages = 8
	MaxPagedSplits = 16
)

// verifyPagedAttention checks an attention node's batched-step geometry,
// where it has one: both attributes, 1 to MaxPagedStages stages, 1 to
// MaxPagedSplits splits.
func verifyPagedAttention(n *Node) error {
	if has, err := attrGroup(n, pagedAttnAttrs, "paged attention geometry", OpAttention); !has || err != nil {
		return err
	}
	if s := n.Int("paged_stages"); s < 1 || s > MaxPagedStages {
		return fmt.Errorf("paged_stages %d: want 1 to %d", s, MaxPagedStages)
	}
	if z := n.Int("paged_splits"); z < 1 || z > MaxPagedSplits {
		return fmt.Errorf("paged_splits %d: want 1 to %d", z, MaxPagedSplits)
	}
	return nil
}

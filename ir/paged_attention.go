package ir

import "fmt"

// The batched-step geometry of an attention node, which a GPU target's
// pass (passes, choosePagedAttention) records for codegen/cuda's
// attend_paged: paged_stages, the key tiles of PagedAttnKeys keys a block
// keeps in flight; paged_splits, the most blocks a query's key tiles are
// dealt to, and paged_split_tiles the key tiles a split takes at least:
// a query seeing n key tiles has PagedSplits(n) splits, key tile j to
// split j mod that, whatever the step.
var pagedAttnAttrs = []string{"paged_stages", "paged_splits", "paged_split_tiles"}

// PagedSplits is the splits of a query that sees keys in n key tiles of
// an attention whose most is splits (a power of two) and least tiles a
// split tiles: the largest power of two at most n/tiles, 1 to splits.
// Powers of two, so that a tile of consecutive queries (whose key tiles
// differ by at most one each way) has at most two counts, one twice the
// other, and the larger's splits nest in the smaller's.
func PagedSplits(n, splits, tiles int64) int64 {
	z := int64(1)
	for z*2 <= splits && z*2*tiles <= n {
		z *= 2
	}
	return z
}

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
	if z := n.Int("paged_splits"); z < 1 || z > MaxPagedSplits || z&(z-1) != 0 {
		return fmt.Errorf("paged_splits %d: want a power of two, 1 to %d", z, MaxPagedSplits)
	}
	if t := n.Int("paged_split_tiles"); t < 1 {
		return fmt.Errorf("paged_split_tiles %d: want 1 or more", t)
	}
	return nil
}

package ir

import "fmt"

// The batched-step geometry of an attention node, which a GPU target's
// pass (passes, choosePagedAttention) records for codegen/cuda's
// attend_paged: paged_stages, the key tiles of PagedAttnKeys keys a block
// keeps in flight; paged_blocks, the blocks its split rule aims a step at.
var pagedAttnAttrs = []string{"paged_stages", "paged_blocks"}

// PagedAttnKeys is attend_paged's key tile (PAGED_KT): a split's keys
// are whole tiles.
const PagedAttnKeys = 64

// MaxPagedStages bounds attend_paged's ring (its shared memory).
const MaxPagedStages = 8

// verifyPagedAttention checks an attention node's batched-step geometry,
// where it has one: both attributes, 1 to MaxPagedStages stages, at least
// one block.
func verifyPagedAttention(n *Node) error {
	if has, err := attrGroup(n, pagedAttnAttrs, OpAttention, "paged attention geometry"); !has || err != nil {
		return err
	}
	if s := n.Int("paged_stages"); s < 1 || s > MaxPagedStages {
		return fmt.Errorf("paged_stages %d: want 1 to %d", s, MaxPagedStages)
	}
	if b := n.Int("paged_blocks"); b < 1 {
		return fmt.Errorf("paged_blocks %d < 1", b)
	}
	return nil
}

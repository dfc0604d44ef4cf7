package passes

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
)

// verifyFinal checks the graph a plan stores: the op rules, and the memory
// plan, so a plan with overlapping live buffers is never written.
func verifyFinal(g *ir.Graph) error {
	if err := ir.Verify(g); err != nil {
		return err
	}
	return CheckPlan(g)
}

// CheckPlan checks a memory-planned graph independently of planMemory's
// allocator: every arena buffer is aligned and inside arena_bytes, weights
// and inputs have no offset, each view sits at its base plus its part, and
// no two buffers overlap while both are live. A buffer is live from its
// node (defsOf) to its last reader (readsOf; a view's readers count for its base;
// outputs live to the end), so a node never writes over its own inputs.
func CheckPlan(g *ir.Graph) error {
	mt, _ := g.Attrs["max_tokens"].(int64)
	arena, okA := g.Attrs["arena_bytes"].(int64)
	peak, okP := g.Attrs["peak_bytes"].(int64)
	if !okA || !okP || mt <= 0 {
		return fmt.Errorf("graph: not memory-planned (max_tokens, arena_bytes, peak_bytes)")
	}
	if peak < 0 || peak > arena {
		return fmt.Errorf("graph: peak_bytes %d outside 0..arena_bytes %d", peak, arena)
	}
	type buffer struct {
		n            *ir.Node
		lo, hi       int64 // byte range
		def, lastUse int   // schedule indices
	}
	bufs := map[*ir.Node]*buffer{}
	var order []*buffer
	defs := defsOf(g)
	for i, n := range g.Nodes {
		off, has := n.Attrs["offset"].(int64)
		switch {
		case n.Op == ir.OpWeight || n.Op == ir.OpInput:
			if has {
				return fmt.Errorf("%%%d %s: weights and inputs take no arena, but offset=%d", n.ID, n.Op, off)
			}
			continue
		case n.Op == ir.OpView:
			base := n.Inputs[0]
			if want := base.Int("offset") + partOffset(base, n.Int("part"), mt); !has || off != want {
				return fmt.Errorf("%%%d view: offset %d, want %d (its base's plus its part's)", n.ID, off, want)
			}
		case !has || off < 0 || off%Alignment != 0:
			return fmt.Errorf("%%%d %s: offset missing, negative or not %d-aligned", n.ID, n.Op, Alignment)
		default:
			size, err := bufferBytes(n, mt)
			if err != nil {
				return fmt.Errorf("%%%d %s: %w", n.ID, n.Op, err)
			}
			if off+size > arena {
				return fmt.Errorf("%%%d %s: [%d, %d) ends beyond the %d-byte arena", n.ID, n.Op, off, off+size, arena)
			}
			b := &buffer{n: n, lo: off, hi: off + size, def: defs[n], lastUse: i}
			bufs[n] = b
			order = append(order, b)
		}
		for _, in := range readsOf(n) {
			if b, ok := bufs[bufferOf(in)]; ok {
				b.lastUse = i
			}
		}
	}
	for _, o := range g.Outputs {
		if b, ok := bufs[bufferOf(o)]; ok {
			b.lastUse = len(g.Nodes)
		}
	}
	for i, a := range order {
		for _, b := range order[i+1:] {
			if b.def > a.lastUse || a.def > b.lastUse {
				continue // one is dead before the other is written
			}
			if a.lo < b.hi && b.lo < a.hi {
				return fmt.Errorf("%%%d %s [%d, %d), live until node %d, overlaps %%%d %s [%d, %d)",
					a.n.ID, a.n.Op, a.lo, a.hi, a.lastUse, b.n.ID, b.n.Op, b.lo, b.hi)
			}
		}
	}
	return nil
}

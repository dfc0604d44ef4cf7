package passes

import (
	"fmt"
	"sort"

	"github.com/llama-orch/orc/ir"
)

// Alignment of every arena offset, as plans.Alignment (passes does not
// import plans; a test checks they agree).
const Alignment = 256

// planMemory places every activation in one arena. Buffers are sized for
// max_tokens rows, so one plan serves every step; a packed node's parts sit
// at fixed offsets inside its buffer (see package ir). Weights and graph
// inputs take no arena: the runtime keeps them elsewhere. A view takes no
// buffer of its own: it aliases its part of the base, and its readers keep
// the base alive.
//
// Liveness follows the schedule: a buffer is live from its node to its
// last reader (to the end for outputs). Buffers are placed first-fit at
// 256-byte aligned offsets among those live at the same time; a node's
// buffer never overlaps its inputs, because they are live while it runs.
// It sets node attr offset (bytes; views: base plus part) and graph attrs
// arena_bytes (the arena's size) and peak_bytes (the most bytes live at
// once, a lower bound the first-fit arena is compared against).
func planMemory(g *ir.Graph) error {
	maxTokens, ok := g.Attrs["max_tokens"].(int64)
	if !ok || maxTokens <= 0 {
		return fmt.Errorf("graph attr max_tokens missing or not positive")
	}
	index := make(map[*ir.Node]int, len(g.Nodes))
	for i, n := range g.Nodes {
		index[n] = i
	}
	// lastUse[b] is the schedule index of b's last reader, through views.
	lastUse := map[*ir.Node]int{}
	for i, n := range g.Nodes {
		if n.Op == ir.OpView {
			continue // a view's own readers count
		}
		for _, in := range n.Inputs {
			lastUse[bufferOf(in)] = i
		}
	}
	for _, o := range g.Outputs {
		lastUse[bufferOf(o)] = len(g.Nodes)
	}

	var live []interval // sorted by offset
	var arena, peak, liveBytes int64
	for i, n := range g.Nodes {
		// Free buffers whose last reader ran before this node.
		kept := live[:0]
		for _, iv := range live {
			if iv.lastUse < i {
				liveBytes -= iv.size
			} else {
				kept = append(kept, iv)
			}
		}
		live = kept
		delete(n.Attrs, "offset")
		if !needsBuffer(n) {
			continue
		}
		size, err := bufferBytes(n, maxTokens)
		if err != nil {
			return fmt.Errorf("%%%d %s: %w", n.ID, n.Op, err)
		}
		last, read := lastUse[n]
		if !read {
			last = i // an unread result (attention's KV write is the point) lives while it is written
		}
		off := firstFit(live, size)
		live = append(live, interval{off, size, last})
		sort.Slice(live, func(a, b int) bool { return live[a].offset < live[b].offset })
		n.Attrs["offset"] = off
		arena = max(arena, off+size)
		liveBytes += size
		peak = max(peak, liveBytes)
	}
	for _, n := range g.Nodes {
		if n.Op == ir.OpView {
			base := n.Inputs[0]
			n.Attrs["offset"] = base.Int("offset") + partOffset(base, n.Int("part"), maxTokens)
		}
	}
	g.Attrs["arena_bytes"] = arena
	g.Attrs["peak_bytes"] = peak
	return nil
}

// interval is one placed buffer.
type interval struct {
	offset, size int64
	lastUse      int
}

// needsBuffer: every computed tensor except views.
func needsBuffer(n *ir.Node) bool {
	return n.Op != ir.OpWeight && n.Op != ir.OpInput && n.Op != ir.OpView && n.DType != ir.None
}

// bufferOf is the node whose buffer holds n's value.
func bufferOf(n *ir.Node) *ir.Node {
	for n.Op == ir.OpView {
		n = n.Inputs[0]
	}
	return n
}

// bufferBytes is n's buffer at max_tokens rows, rounded up to Alignment.
func bufferBytes(n *ir.Node, maxTokens int64) (int64, error) {
	elem, ok := elemBytes[n.DType]
	if !ok {
		return 0, fmt.Errorf("no arena element size for dtype %s", n.DType)
	}
	b := n.Shape.Elems(maxTokens) * elem
	return (b + Alignment - 1) / Alignment * Alignment, nil
}

// elemBytes are the sizes of the dtypes activations may have.
var elemBytes = map[ir.DType]int64{ir.F32: 4, ir.I32: 4, ir.F16: 2, ir.BF16: 2}

// partOffset is the byte offset of part in a packed f32 node: max_tokens
// rows of every earlier part.
func partOffset(packed *ir.Node, part, maxTokens int64) int64 {
	var cols int64
	for _, c := range packed.Ints("parts")[:part] {
		cols += c
	}
	return cols * maxTokens * elemBytes[packed.DType]
}

// firstFit returns the lowest aligned offset where size bytes fit between
// the live intervals (sorted by offset).
func firstFit(live []interval, size int64) int64 {
	var off int64
	for _, iv := range live {
		if off+size <= iv.offset {
			return off
		}
		off = max(off, iv.offset+iv.size)
	}
	return off
}

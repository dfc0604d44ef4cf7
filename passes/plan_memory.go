package passes

import (
	"fmt"
	"slices"
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
// Liveness follows the schedule: a buffer is live from its node (defsOf
// says where else it starts) to its last reader (to the end for outputs;
// readsOf says what a node reads), both ends included, so a node's buffer
// never overlaps its inputs. All lifetimes are known before placing,
// so placement is the offline "greedy by size" heuristic: the largest
// buffers are placed first, each at the lowest 256-byte aligned offset
// that overlaps no placed buffer live at the same time. Placing the few big
// FFN buffers first keeps the small ones from fragmenting the arena (on
// qwen2.5-0.5b at 512 tokens, first-fit in schedule order needed 36% more
// than the peak).
//
// It sets node attr offset (bytes; views: base plus part) and graph attrs
// arena_bytes (the arena's size) and peak_bytes (the most bytes live at
// once: no placement can use less, so arena_bytes/peak_bytes measures the
// fragmentation).
func planMemory(g *ir.Graph) error {
	maxTokens, ok := g.Attrs["max_tokens"].(int64)
	if !ok || maxTokens <= 0 {
		return fmt.Errorf("graph attr max_tokens missing or not positive")
	}
	// lastUse[b] is the schedule index of b's last reader, through views.
	lastUse := map[*ir.Node]int{}
	for i, n := range g.Nodes {
		if n.Op == ir.OpView {
			continue // a view's own readers count
		}
		for _, in := range readsOf(n) {
			lastUse[bufferOf(in)] = i
		}
	}
	for _, o := range g.Outputs {
		lastUse[bufferOf(o)] = len(g.Nodes)
	}
	defs := defsOf(g)
	var bufs []*buffer
	for i, n := range g.Nodes {
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
		bufs = append(bufs, &buffer{node: n, size: size, def: defs[n], last: last})
	}
	g.Attrs["peak_bytes"] = peakBytes(bufs, len(g.Nodes))
	g.Attrs["arena_bytes"] = placeBySize(bufs)
	for _, b := range bufs {
		b.node.Attrs["offset"] = b.offset
	}
	for _, n := range g.Nodes {
		if n.Op == ir.OpView {
			base := n.Inputs[0]
			n.Attrs["offset"] = base.Int("offset") + partOffset(base, n.Int("part"), maxTokens)
		}
	}
	return nil
}

// buffer is one node's arena buffer and its lifetime [def, last] in
// schedule indices.
type buffer struct {
	node         *ir.Node
	size, offset int64
	def, last    int
}

func (b *buffer) liveWith(o *buffer) bool { return b.def <= o.last && o.def <= b.last }

// peakBytes is the largest total size of buffers live at one schedule index.
func peakBytes(bufs []*buffer, steps int) int64 {
	delta := make([]int64, steps+2)
	for _, b := range bufs {
		delta[b.def] += b.size
		delta[b.last+1] -= b.size
	}
	var live, peak int64
	for _, d := range delta {
		live += d
		peak = max(peak, live)
	}
	return peak
}

// placeBySize sets every buffer's offset, largest first (ties in schedule
// order), and returns the arena size.
func placeBySize(bufs []*buffer) int64 {
	bySize := append([]*buffer(nil), bufs...)
	sort.SliceStable(bySize, func(i, j int) bool { return bySize[i].size > bySize[j].size })
	var placed []*buffer // sorted by offset
	var arena int64
	for _, b := range bySize {
		off := int64(0)
		for _, p := range placed {
			if !p.liveWith(b) {
				continue
			}
			if off+b.size <= p.offset {
				break // fits in the gap below p
			}
			off = max(off, p.offset+p.size)
		}
		b.offset = off
		i := sort.Search(len(placed), func(i int) bool { return placed[i].offset > off })
		placed = slices.Insert(placed, i, b)
		arena = max(arena, off+b.size)
	}
	return arena
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

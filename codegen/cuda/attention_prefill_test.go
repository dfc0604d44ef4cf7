package cuda_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// TestPrefillAttentionSplits checks what codegen emits for attend_prefill
// from the node's recorded geometry (choosePrefillSplits): the grid's split
// dimension and the template's arguments are the record's, the partials
// and arrival counters lie in the plan's arena past its planned buffers,
// sized for the step that leaves the most, and a node without the record
// is refused.
func TestPrefillAttentionSplits(t *testing.T) {
	g, man := attnGraph(t, attnCases[0], 1, true, 32768) // Qwen2.5-0.5B: 14 heads over 2 kv heads, 512-token steps
	var att *ir.Node
	for _, n := range g.Nodes {
		if n.Op == ir.OpAttention {
			att = n
		}
	}
	splits, keys, blocks, parts := att.Int("prefill_splits"), att.Int("prefill_split_keys"), att.Int("prefill_split_blocks"), att.Int("prefill_split_parts")
	if splits != 32 || keys != 512 || blocks != 396 || parts != 1566 {
		t.Fatalf("recorded splits %d, keys %d, blocks %d, parts %d; want 32, 512, 396, 1566 for sm_90", splits, keys, blocks, parts)
	}
	out, err := cuda.Generate(g, man, cuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var l *plans.Launch
	for i := range out.Kernels.Prefill {
		if strings.HasPrefix(out.Kernels.Prefill[i].Kernel, "attend_prefill") {
			l = &out.Kernels.Prefill[i]
		}
	}
	if l == nil {
		t.Fatal("no attend_prefill in the prefill schedule")
	}
	if suffix := fmt.Sprintf("_%d_%d_%d_%d", splits, keys, blocks, parts); !strings.HasSuffix(l.Kernel, suffix) {
		t.Errorf("kernel %s does not end in the record's %s", l.Kernel, suffix)
	}
	if l.GridA != [3]int64{7, 0, 0} || l.GridB != [3]int64{0, 2, splits} || l.GridDiv != [3]int64{64, 0, 0} {
		t.Errorf("grid %v·T + %v over %v, want (ceil(7T/64), 2, %d)", l.GridA, l.GridB, l.GridDiv, splits)
	}
	// A partial is 64 rows of 64 dims and (m, l).
	partBytes := parts * 64 * (64 + 2) * 4
	part, counters := l.Args[len(l.Args)-3], l.Args[len(l.Args)-2]
	planned := g.Attrs["arena_bytes"].(int64)
	if part.Kind != plans.ArgArena || counters.Kind != plans.ArgArena || part.Offset < planned || counters.Offset < part.Offset+partBytes ||
		out.ArenaBytes < counters.Offset+4*112 {
		t.Errorf("partials at %v and counters at %v in an arena of %d (planned %d), want %d bytes of partials past the planned buffers, then 112 counters",
			part, counters, out.ArenaBytes, planned, partBytes)
	}
	if l.Smem != 2*2*64*(64+8)*2 {
		t.Errorf("dynamic shared memory %d, want two stages of K and V tiles, %d", l.Smem, 2*2*64*(64+8)*2)
	}
	delete(att.Attrs, "prefill_split_blocks")
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "choosePrefillSplits") {
		t.Errorf("an attention without its prefill geometry: got %v, want an error naming choosePrefillSplits", err)
	}
}

package passes

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// TestPrefillSplits checks the prefill attention's split rule at the
// shapes of the target models on an H100/H200 (waves of 396 blocks, at
// most 4 waves): the splits whose blocks take the fewest waves per unit of
// work, never past the grid's splits or the partials' room.
func TestPrefillSplits(t *testing.T) {
	for _, c := range []struct {
		what                                   string
		rowBlocks, splits, blocks, parts, want int64
	}{
		{"Qwen2.5-0.5B pp512: 784 blocks in 2 waves", 112, 32, 396, 1584, 7},
		{"Qwen2.5-0.5B pp128", 28, 32, 396, 1584, 14},
		{"Qwen2.5-0.5B pp5: one wave, the most splits that improve", 2, 32, 396, 1584, 31},
		{"Phi-3-mini pp512: 768 blocks in 2 waves", 256, 16, 396, 1584, 3},
		{"gpt-oss pp512, 2 splits allowed: 3 waves of 1,024 beside 2 of 512", 512, 2, 396, 1584, 2},
		{"gpt-oss pp2048: 6 waves already", 2048, 2, 396, 1584, 1},
		{"the partials' room", 112, 32, 396, 700, 3},
		{"the grid's splits", 2, 4, 396, 1584, 4},
	} {
		if got := PrefillSplits(c.rowBlocks, c.splits, c.blocks, c.parts); got != c.want {
			t.Errorf("%s: %d splits, want %d", c.what, got, c.want)
		}
	}
}

// TestChoosePrefillSplitsContext checks that a short context bounds the
// splits (no split of fewer than prefillSplitKeys keys could be used) and
// that every step's blocks fit the recorded partials.
func TestChoosePrefillSplitsContext(t *testing.T) {
	g := parseFile(t, "testdata/choosePrefillSplits.before.ir")
	g.Attrs["ctx"] = int64(1000)
	if err := choosePrefillSplits(g); err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if n.Op != ir.OpAttention {
			continue
		}
		if n.Int("prefill_splits") != 2 {
			t.Errorf("%%%d: %d splits in a context of 1000 keys, want 2", n.ID, n.Int("prefill_splits"))
		}
		grp, kvh := n.Int("heads")/n.Int("kv_heads"), n.Int("kv_heads")
		for tok := int64(1); tok <= 512; tok++ {
			rb := PrefillRowBlocks(tok, grp, kvh)
			if s := PrefillSplits(rb, n.Int("prefill_splits"), n.Int("prefill_split_blocks"), n.Int("prefill_split_parts")); s > 1 && rb*s > n.Int("prefill_split_parts") {
				t.Errorf("%%%d at %d tokens: %d blocks of partials, room for %d", n.ID, tok, rb*s, n.Int("prefill_split_parts"))
			}
		}
	}
}

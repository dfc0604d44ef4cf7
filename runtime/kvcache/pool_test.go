package kvcache

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

func newPool(t *testing.T, blocks, bt int) *Pool {
	t.Helper()
	p, err := NewPool(blocks, bt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func seq(n int, start int32) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = start + int32(i)
	}
	return s
}

func TestAcquireReleaseGivesEveryBlockBack(t *testing.T) {
	p := newPool(t, 8, 4)
	a, b := NewTable(8), NewTable(8)
	if _, err := p.Acquire(a, seq(5, 0), 12); err != nil { // 3 blocks
		t.Fatal(err)
	}
	if _, err := p.Acquire(b, seq(3, 100), 17); err != nil { // 5 blocks
		t.Fatal(err)
	}
	if s := p.Stats(); s.Used != 8 || s.Free != 0 {
		t.Fatalf("stats %+v, want 8 used", s)
	}
	if p.Positions(a) != 12 || p.Positions(b) != 20 {
		t.Errorf("positions %d, %d; want 12, 20", p.Positions(a), p.Positions(b))
	}
	seen := map[int32]bool{}
	for _, blk := range append(slices.Clone(a.Blocks()), b.Blocks()...) {
		if seen[blk] {
			t.Fatalf("block %d given twice", blk)
		}
		seen[blk] = true
	}
	p.Release(a)
	p.Release(b)
	if s := p.Stats(); s.Used != 0 || s.Free != 8 {
		t.Fatalf("after release %+v, want 8 free", s)
	}
}

func TestOutOfBlocksChangesNothing(t *testing.T) {
	p := newPool(t, 4, 4)
	a, b := NewTable(4), NewTable(4)
	if _, err := p.Acquire(a, seq(4, 0), 12); err != nil {
		t.Fatal(err)
	}
	before := p.Stats()
	if _, err := p.Acquire(b, seq(4, 50), 8); !errors.Is(err, ErrNoBlocks) {
		t.Fatalf("got %v, want ErrNoBlocks", err)
	}
	if p.Stats() != before || len(b.Blocks()) != 0 {
		t.Errorf("a refused Acquire changed the pool: %+v → %+v, table %v", before, p.Stats(), b.Blocks())
	}
	if _, err := p.Acquire(b, seq(4, 50), 17); !errors.Is(err, ErrTooLarge) {
		t.Errorf("17 positions in a pool of 16: got %v, want ErrTooLarge", err)
	}
	p.Release(a)
	if _, err := p.Acquire(b, seq(4, 50), 8); err != nil {
		t.Errorf("after release: %v", err)
	}
}

func TestPrefixIsReusedAndShared(t *testing.T) {
	p := newPool(t, 16, 4)
	prompt := seq(10, 1) // blocks [1..4] [5..8], then 9 10
	a := NewTable(16)
	if got, err := p.Acquire(a, prompt, 14); err != nil || got != 0 {
		t.Fatalf("cold: cached %d, %v", got, err)
	}
	// The prompt and two generated tokens are in the cache: three full blocks.
	history := append(slices.Clone(prompt), 77, 78)
	p.Commit(a, history, 12)

	// Same prompt, longer: the first three blocks come from the cache.
	b := NewTable(16)
	longer := append(slices.Clone(history), 5, 6, 7)
	got, err := p.Acquire(b, longer, 20)
	if err != nil || got != 12 {
		t.Fatalf("warm: cached %d, %v; want 12", got, err)
	}
	if !slices.Equal(a.Blocks()[:3], b.Blocks()[:3]) || b.Blocks()[3] == a.Blocks()[3] {
		t.Errorf("tables %v and %v: want the first three blocks shared and the rest private", a.Blocks(), b.Blocks())
	}
	// A prompt that is exactly the cached blocks leaves its last block to
	// compute, for its logits.
	c := NewTable(16)
	if got, _ := p.Acquire(c, history, 13); got != 8 {
		t.Errorf("a prompt of 12 cached tokens reuses %d, want 8", got)
	}
	// A prompt that differs in the second block reuses only the first.
	d := NewTable(16)
	other := slices.Clone(longer)
	other[6] = 999
	if got, _ := p.Acquire(d, other, 16); got != 4 {
		t.Errorf("a prompt differing at position 6 reuses %d, want 4", got)
	}
	s := p.Stats()
	if s.Hits != 12+8+4 || s.Queries != uint64(len(prompt)+len(longer)+len(history)+len(other)) {
		t.Errorf("hits %d of %d queried tokens", s.Hits, s.Queries)
	}
	for _, tb := range []*Table{a, b, c, d} {
		p.Release(tb)
	}
	if s := p.Stats(); s.Used != 0 || s.Cached != 3 || s.Free != 16 {
		t.Errorf("after release %+v: want 3 cached, all 16 free", s)
	}
}

func TestCachedBlocksAreEvictedLeastRecentFirst(t *testing.T) {
	p := newPool(t, 4, 2)
	x, y := seq(4, 10), seq(4, 40)
	for _, prompt := range [][]int32{x, y} {
		tb := NewTable(4)
		if _, err := p.Acquire(tb, prompt, 4); err != nil {
			t.Fatal(err)
		}
		p.Commit(tb, prompt, 4)
		p.Release(tb)
	}
	if s := p.Stats(); s.Cached != 4 {
		t.Fatalf("%+v: want 4 cached blocks", s)
	}
	// Released first, x goes first, its second block before its first.
	z := NewTable(4)
	if _, err := p.Acquire(z, seq(1, 90), 1); err != nil {
		t.Fatal(err)
	}
	tb := NewTable(4)
	if got, _ := p.Acquire(tb, append(slices.Clone(y), 1), 5); got != 4 {
		t.Errorf("y reuses %d positions, want 4", got) // its fresh block evicts x's first
	}
	p.Release(tb)
	p.Release(z)
	if got, _ := p.Acquire(tb, append(slices.Clone(x), 1), 5); got != 0 {
		t.Errorf("x reuses %d positions after both its blocks were evicted, want 0", got)
	}
}

func TestCommitKeepsADuplicatePrivate(t *testing.T) {
	p := newPool(t, 8, 2)
	prompt := seq(5, 3)
	a, b := NewTable(8), NewTable(8)
	for _, tb := range []*Table{a, b} {
		if got, err := p.Acquire(tb, prompt, 6); err != nil || got != 0 {
			t.Fatalf("cached %d, %v", got, err)
		}
	}
	p.Commit(a, prompt, 4)
	p.Commit(b, prompt, 4) // computed the same prefix meanwhile
	p.Release(b)
	if s := p.Stats(); s.Cached != 0 || s.Used != 3 {
		t.Errorf("%+v: b's duplicate blocks must go back to the free list", s)
	}
	p.Release(a)
	if s := p.Stats(); s.Cached != 2 {
		t.Errorf("%+v: a's two full blocks stay cached", s)
	}
}

// TestRandomUseKeepsCounts runs random acquires, commits and releases and
// checks the counts after each: blocks held = the tables' blocks, none
// given to two sequences unless shared from the cache, all back at the end.
func TestRandomUseKeepsCounts(t *testing.T) {
	p := newPool(t, 64, 4)
	r := rand.New(rand.NewPCG(1, 2))
	tables := make([]*Table, 8)
	prompts := make([][]int32, len(tables))
	for i := range tables {
		tables[i] = NewTable(64)
	}
	for step := range 20000 {
		i := r.IntN(len(tables))
		tb := tables[i]
		switch {
		case len(tb.Blocks()) == 0:
			// Prompts share prefixes often: a few bases, random tails.
			base := int32(r.IntN(3) * 1000)
			prompt := append(seq(r.IntN(12), base), seq(1+r.IntN(12), int32(r.IntN(1e6)))...)
			if _, err := p.Acquire(tb, prompt, len(prompt)+r.IntN(20)); err != nil && !errors.Is(err, ErrNoBlocks) {
				t.Fatal(err)
			}
			prompts[i] = prompt
		case r.IntN(3) == 0:
			p.Release(tb)
		default:
			p.Commit(tb, prompts[i], r.IntN(len(prompts[i])+1))
		}
		held := 0
		for _, tb := range tables {
			held += len(tb.Blocks())
		}
		refs := 0
		for _, n := range p.refs {
			refs += int(n)
		}
		s := p.Stats()
		if refs != held || s.Used+s.Free != s.Blocks || s.Cached > s.Free {
			t.Fatalf("step %d: refs %d, blocks held %d, stats %+v", step, refs, held, s)
		}
	}
	for _, tb := range tables {
		p.Release(tb)
	}
	if s := p.Stats(); s.Used != 0 || s.Free != 64 {
		t.Errorf("after releasing everything %+v", s)
	}
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	p := newPool(t, 32, 4)
	tb := NewTable(32)
	prompt := seq(30, 5)
	cycle := func() {
		if _, err := p.Acquire(tb, prompt, 40); err != nil {
			t.Fatal(err)
		}
		p.Commit(tb, prompt, 30)
		p.Release(tb)
	}
	cycle()
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}

package cpu

import (
	"cmp"
	"slices"
	"testing"

	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching/batchtest"
)

// A device whose rounding turned a near-tie of Qwen3-MoE's router computes
// rows far outside the logits' tolerance of the CPU device's (the GPU's
// batched step did, on the H200): ExplainByTurns finds the routing it
// turned, and refuses rows that a turn of a decisive routing moved.
func TestExplainByTurns(t *testing.T) {
	const (
		tol   = 2e-3 // the GPU agreement's bound (codegen/cuda's agreeTolerance)
		bound = 1e-2 // wider than the GPU needs, so that this short run has near-ties
		steps = 24
	)
	dir := t.TempDir() + "/plan"
	if err := compiler.Compile(compiler.Options{Model: synthModel(t, "qwen3-30b-a3b-tiny"), Out: dir, Target: "cpu", MaxTokens: 16}); err != nil {
		t.Fatal(err)
	}
	// The reference: ExplainByTurns' hook, and a record of every routing.
	ts := &batchtest.Turns{Bound: bound}
	var routings []batchtest.Turn
	recording := true
	ref := openRouted(t, dir, func(r *Routing) {
		if recording {
			routings = append(routings, batchtest.Turn{Pos: r.Pos, MoE: r.MoE, Margin: r.Margin()})
		}
		ts.Route(r.MoE, r.Pos, r.Margin(), r.Turn)
	})
	// The other device turns the routing of turned, where set.
	var turned *batchtest.Turn
	other := openRouted(t, dir, func(r *Routing) {
		if turned != nil && r.Pos == turned.Pos && r.MoE == turned.MoE {
			r.Turn()
		}
	})
	vocab := ref.Info().Vocab
	refB, otherB := newTurnBatch(t, ref), newTurnBatch(t, other)
	s := batchtest.Sequences(4, vocab, refB.Blocks())[2] // a prompt of 13 tokens
	run := func(b runtime.Batch, feed []int32) [][]float32 {
		r := &batchtest.Seq{Prompt: s.Prompt, Blocks: s.Blocks, Feed: feed}
		if err := batchtest.Run(b, vocab, []*batchtest.Seq{r}, steps, func(int, int) int { return len(s.Prompt) }); err != nil {
			t.Fatal(err)
		}
		return r.Logits
	}
	base := run(refB, nil)
	recording = false
	feed := batchtest.Greedy(base)
	// turnOff runs the other device with c turned and reports whether a
	// row moved outside tol: the comparison a routing turns fails.
	turnOff := func(c batchtest.Turn) (*batchtest.Seq, bool) {
		turned = &c
		defer func() { turned = nil }()
		got := &batchtest.Seq{Prompt: s.Prompt, Feed: feed, Logits: run(otherB, feed)}
		for j, row := range got.Logits {
			if batchtest.Error(row, base[j]) > tol {
				return got, true
			}
		}
		return got, false
	}

	// The nearest tie whose turn moves a row outside tol is explained.
	near := slices.DeleteFunc(slices.Clone(routings), func(r batchtest.Turn) bool { return r.Margin >= bound })
	slices.SortStableFunc(near, func(a, b batchtest.Turn) int { return cmp.Compare(a.Margin, b.Margin) })
	var got *batchtest.Seq
	var want batchtest.Turn
	for _, c := range near {
		if g, off := turnOff(c); off {
			got, want = g, c
			break
		}
	}
	if got == nil {
		t.Fatalf("no turn of the %d routings of margin below %.0e moves a row outside %.0e", len(near), bound, tol)
	}
	turns, err := batchtest.ExplainByTurns(refB, vocab, 16, got, s.Blocks, ts, tol)
	if err != nil {
		t.Fatalf("turning %v: %v", want, err)
	}
	t.Logf("turned %v (of %d near-ties); found %v", want, len(near), turns)
	if len(turns) != 1 || turns[0].Pos != want.Pos || turns[0].MoE != want.MoE {
		t.Errorf("the other device turned %v; ExplainByTurns found %v", want, turns)
	}

	// A decisive routing turned is a fault no near-tie explains: the most
	// decisive of the prompt's first positions whose turn shows.
	early := slices.DeleteFunc(slices.Clone(routings), func(r batchtest.Turn) bool { return r.Pos > 3 })
	slices.SortStableFunc(early, func(a, b batchtest.Turn) int { return cmp.Compare(b.Margin, a.Margin) })
	got = nil
	for _, c := range early {
		if g, off := turnOff(c); off {
			got, want = g, c
			break
		}
	}
	if got == nil || want.Margin < 10*bound {
		t.Fatalf("no decisive routing of positions 0 to 3 shows when turned (%v)", early)
	}
	turns, err = batchtest.ExplainByTurns(refB, vocab, 16, got, s.Blocks, ts, tol)
	t.Logf("turned the decisive %v: %v", want, err)
	if err == nil {
		t.Errorf("turning the decisive %v: ExplainByTurns explained it by %v", want, turns)
	}
}

// openRouted opens the CPU plan in dir with route as its Route option.
func openRouted(t *testing.T, dir string, route func(*Routing)) *Device {
	t.Helper()
	dev, err := Open(openPlan(t, dir), Options{Ctx: 64, Route: route})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dev
}

// newTurnBatch is a batch of 4 sequences, 16 tokens a step, in blocks of 4.
func newTurnBatch(t *testing.T, dev *Device) runtime.Batch {
	t.Helper()
	b, err := dev.NewBatch(runtime.BatchConfig{Sequences: 4, StepTokens: 16, BlockTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

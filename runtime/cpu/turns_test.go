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
// turned, and refuses rows that a turn of a decisive routing moved. And two
// runs fed their own greedy picks, one of them so turned, part:
// ExplainParting shows the turn between them, and refuses a parting at a
// wrong id or at a decisive routing turned.
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

	// Two runs fed their own picks part where one turned a near-tie
	// routing: ExplainParting shows it. Sequence 0 (a prompt of 3 tokens)
	// parts within a few steps of a turn; freeRun is its run of partSteps
	// rows on b fed its own picks, with c turned on the other device.
	const partSteps = 8
	s0 := batchtest.Sequences(4, vocab, refB.Blocks())[0]
	freeRun := func(b runtime.Batch, c *batchtest.Turn) [][]float32 {
		turned = c
		defer func() { turned = nil }()
		r := &batchtest.Seq{Prompt: s0.Prompt, Blocks: s0.Blocks}
		if err := batchtest.Run(b, vocab, []*batchtest.Seq{r}, partSteps, func(int, int) int { return len(s0.Prompt) }); err != nil {
			t.Fatal(err)
		}
		return r.Logits
	}
	routings, recording = nil, true
	base0 := freeRun(refB, nil)
	recording = false
	ids0 := batchtest.Greedy(base0)
	// apart is the other device's run with the first of cands (in order)
	// whose turn parts the greedy ids, and that turn.
	apart := func(cands []batchtest.Turn) ([][]float32, batchtest.Turn, bool) {
		for _, c := range cands {
			if rows := freeRun(otherB, &c); !slices.Equal(batchtest.Greedy(rows), ids0) {
				return rows, c, true
			}
		}
		return nil, batchtest.Turn{}, false
	}
	near = slices.DeleteFunc(slices.Clone(routings), func(r batchtest.Turn) bool { return r.Margin >= bound })
	slices.SortStableFunc(near, func(a, b batchtest.Turn) int { return cmp.Compare(a.Margin, b.Margin) })
	rows, want, ok := apart(near)
	if !ok {
		t.Fatalf("no turn of the %d routings of margin below %.0e parts the greedy ids", len(near), bound)
	}
	p, err := batchtest.ExplainParting(refB, vocab, 16, s0.Prompt, s0.Blocks, base0, rows, ts, tol)
	t.Logf("turned %v: the runs part at row %d; explained by %v and %v (%v)", want, p.Row, p.A, p.C, err)
	if err != nil || len(p.A) != 0 || len(p.C) != 1 || p.C[0].Pos != want.Pos || p.C[0].MoE != want.MoE {
		t.Errorf("the other device turned %v and parts at row %d: ExplainParting found %v and %v (%v)", want, p.Row, p.A, p.C, err)
	}
	// A wrong id at that row (its logit raised above the row's largest) is
	// no routing turned.
	wrong := slices.Clone(base0)
	wrong[p.Row] = slices.Clone(base0[p.Row])
	top := ids0[p.Row]
	id := (top + 1) % int32(vocab)
	wrong[p.Row][id] = wrong[p.Row][top] + 1
	if q, err := batchtest.ExplainParting(refB, vocab, 16, s0.Prompt, s0.Blocks, base0, wrong, ts, tol); err == nil {
		t.Errorf("id %d in place of %d at row %d: ExplainParting explained it by %v and %v", id, top, q.Row, q.A, q.C)
	} else {
		t.Logf("a wrong id at row %d: %v", q.Row, err)
	}
	// A decisive routing turned parts them past any near-tie's explaining:
	// the most decisive whose turn parts the ids.
	decisive := slices.DeleteFunc(slices.Clone(routings), func(r batchtest.Turn) bool { return r.Margin < 10*bound })
	slices.SortStableFunc(decisive, func(a, b batchtest.Turn) int { return cmp.Compare(b.Margin, a.Margin) })
	if rows, want, ok = apart(decisive); !ok {
		t.Fatalf("no routing of margin above %.0e parts the greedy ids", 10*bound)
	}
	p, err = batchtest.ExplainParting(refB, vocab, 16, s0.Prompt, s0.Blocks, base0, rows, ts, tol)
	t.Logf("turned the decisive %v: the runs part at row %d: %v", want, p.Row, err)
	if err == nil {
		t.Errorf("turning the decisive %v: ExplainParting explained the parting at row %d by %v and %v", want, p.Row, p.A, p.C)
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

package batchtest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/llama-orch/orc/runtime"
)

// A mixture of experts routes each token to the experts of its largest
// router logits: a step function of the logits. Where two of them nearly
// tie at the boundary of the picks, another device's rounding (of the
// router's input, well within the logits' tolerance) may pick the other
// expert, and that token's output, with every later row of its sequence
// that attends to it, moves by far more than rounding. Such a device is
// not wrong: the reference device computes the same rows once that
// routing is turned. ExplainByTurns finds those routings.

// Turn is one routing the reference device turns: the token at position
// Pos, routed by mixture MoE (its index among the model's), has its last
// pick replaced by the best expert not picked. Margin is how near the
// tie was (cpu.Routing's Margin).
type Turn struct {
	Pos, MoE int
	Margin   float64
}

func (t Turn) String() string {
	return fmt.Sprintf("position %d by MoE %d (margin %.2g)", t.Pos, t.MoE, t.Margin)
}

// Turns is the reference device's routing hook for ExplainByTurns'
// reruns (the CPU device's Route option calls Route): while a rerun runs
// one sequence, it turns the routings named and notes those of margin
// below Bound; otherwise it leaves every routing alone.
type Turns struct {
	Bound float64
	on    bool
	turn  []Turn
	near  []Turn
}

// Route sees the token at pos routed by mixture moe with margin; turn
// turns it.
func (ts *Turns) Route(moe, pos int, margin float64, turn func()) {
	if !ts.on {
		return
	}
	if slices.ContainsFunc(ts.turn, func(t Turn) bool { return t.Pos == pos && t.MoE == moe }) {
		turn()
		return
	}
	if margin < ts.Bound {
		ts.near = append(ts.near, Turn{Pos: pos, MoE: moe, Margin: margin})
	}
}

// turnTries bounds the near-ties ExplainByTurns tries for one row.
const turnTries = 16

// ExplainByTurns checks another device's rows of s (s.Logits, after
// s.Prompt and each of s.Feed) against the reference batch b, whose
// device routes through ts, rerunning s alone in blocks, its prompt in
// steps of stepTokens (the reference's rows do not depend on how its
// steps are made up, as the CPU device's do not): every row must
// lie within tol (Error) of the reference's, where the reference may turn
// routings of margin below ts.Bound at or before a row's position. From
// the first row, each row outside tol must come within it, with every
// earlier row staying within, by turning one more such routing (the
// nearest ties first). It returns the routings turned, or an error naming
// the first row no turn explains.
func ExplainByTurns(b runtime.Batch, vocab, stepTokens int, s *Seq, blocks []int32, ts *Turns, tol float64) ([]Turn, error) {
	rerun := func(turns []Turn) ([][]float32, []Turn, error) {
		return ts.rerun(b, vocab, stepTokens, s, blocks, turns)
	}
	// within is the first row of rows not within tol of s's, or -1.
	within := func(rows [][]float32) int {
		for j, row := range rows {
			// !(e <= tol): a NaN is outside.
			if e := Error(s.Logits[j], row); !(e <= tol) {
				return j
			}
		}
		return -1
	}
	var turns []Turn
	ref, near, err := rerun(nil)
	if err != nil {
		return nil, err
	}
	for {
		j := within(ref)
		if j < 0 {
			return turns, nil
		}
		pos := len(s.Prompt) - 1 + j
		cands := slices.DeleteFunc(slices.Clone(near), func(t Turn) bool { return t.Pos > pos })
		slices.SortStableFunc(cands, func(a, b Turn) int { return cmp.Compare(a.Margin, b.Margin) })
		cands = cands[:min(len(cands), turnTries)]
		found := false
		for _, c := range cands {
			rows, n, err := rerun(append(slices.Clone(turns), c))
			if err != nil {
				return nil, err
			}
			if k := within(rows[:j+1]); k < 0 {
				turns, ref, near, found = append(turns, c), rows, n, true
				break
			}
		}
		if !found {
			return turns, fmt.Errorf("row %d (position %d) is %.3g off the reference's (bound %.0e) with routings %v turned, and no turn of the %d near-ties at or before it (margin below %.0e: %v) brings it within",
				j, pos, Error(s.Logits[j], ref[j]), tol, turns, len(cands), ts.Bound, cands)
		}
	}
}

// rerun runs s alone on the reference b (in blocks, its prompt in steps of
// stepTokens, s.Feed fed) for len(s.Logits) rows with the routings turns
// turned, and returns its rows and the near-ties it saw.
func (ts *Turns) rerun(b runtime.Batch, vocab, stepTokens int, s *Seq, blocks []int32, turns []Turn) ([][]float32, []Turn, error) {
	ts.on, ts.turn, ts.near = true, turns, nil
	defer func() { ts.on = false }()
	r := &Seq{Prompt: s.Prompt, Blocks: blocks, Feed: s.Feed}
	if err := Run(b, vocab, []*Seq{r}, len(s.Logits), func(int, int) int { return stepTokens }); err != nil {
		return nil, nil, err
	}
	return r.Logits, ts.near, nil
}

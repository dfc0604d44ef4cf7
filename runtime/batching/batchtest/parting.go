package batchtest

import (
	"fmt"
	"math"
	"slices"

	"github.com/llama-orch/orc/runtime"
)

// Two runs of one prompt on another device, each fed its own greedy picks
// (a batched step's and the sequence's alone), pick the same ids until a
// row where their logits differ by more than a near-tie of the row: on a
// mixture of experts, a routing near-tie that the two runs' different
// sums turned (ExplainByTurns' premise), after which both are right. The
// reference device shows it: each run's rows up to the parting are the
// reference's with near-tie routings turned, the two runs' turns differ,
// and the reference, so turned, picks each run's id there.

// Parting is where two runs part and the routings that explain each.
type Parting struct {
	Row  int    // the first row whose picks differ; -1: none does
	A, C []Turn // the routings the reference turns to compute each run's rows
}

// NearTie says whether row holds ids a and b within tol of its largest
// magnitude: rounding within tol may pick either.
func NearTie(row []float32, a, b int32, tol float64) bool {
	return math.Abs(gap(row, a, b)) <= tol
}

// ExplainParting explains where runs a and c of prompt on another device
// (their logits rows, each run fed its own greedy picks) part, against the
// reference batch b, whose device routes through ts (ExplainByTurns' b,
// stepTokens, blocks, ts and tol): each run's rows up to and with the
// first row their picks differ at must lie within tol of the reference's
// fed the runs' common picks, with routings of margin below ts.Bound
// turned (ExplainByTurns); the two must turn different routings; and the
// reference so turned must pick each run's id at that row, or hold it in a
// near-tie with the pick (NearTie, 2·tol: a row within tol of the
// reference's may pick either of two ids that near). Any other parting is
// an error.
func ExplainParting(b runtime.Batch, vocab, stepTokens int, prompt, blocks []int32, a, c [][]float32, ts *Turns, tol float64) (Parting, error) {
	ia, ic := Greedy(a), Greedy(c)
	j := -1
	for k := range min(len(ia), len(ic)) {
		if ia[k] != ic[k] {
			j = k
			break
		}
	}
	p := Parting{Row: j}
	if j < 0 {
		return p, nil
	}
	explain := func(name string, rows [][]float32, ids []int32) ([]Turn, error) {
		s := &Seq{Prompt: prompt, Feed: ids[:j], Logits: rows[:j+1]}
		turns, err := ExplainByTurns(b, vocab, stepTokens, s, blocks, ts, tol)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", name, err)
		}
		ref, _, err := ts.rerun(b, vocab, stepTokens, s, blocks, turns)
		if err != nil {
			return nil, err
		}
		if pick := Greedy(ref[j:])[0]; pick != ids[j] && !NearTie(ref[j], pick, ids[j], 2*tol) {
			return nil, fmt.Errorf("run %s picks %d at row %d; the reference with routings %v turned picks %d, %.3g of its largest logit above it",
				name, ids[j], j, turns, pick, gap(ref[j], pick, ids[j]))
		}
		return turns, nil
	}
	var err error
	if p.A, err = explain("a", a, ia); err != nil {
		return p, err
	}
	if p.C, err = explain("c", c, ic); err != nil {
		return p, err
	}
	if slices.Equal(p.A, p.C) {
		return p, fmt.Errorf("runs a and c pick %d and %d at row %d, yet the reference computes both with the same routings turned (%v): no routing turned between them",
			ia[j], ic[j], j, p.A)
	}
	return p, nil
}

// gap is row[x] − row[y] relative to row's largest magnitude.
func gap(row []float32, x, y int32) float64 {
	m := 0.0
	for _, v := range row {
		m = max(m, math.Abs(float64(v)))
	}
	return (float64(row[x]) - float64(row[y])) / max(m, math.SmallestNonzeroFloat64)
}

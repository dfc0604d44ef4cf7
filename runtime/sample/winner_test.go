package sample

import (
	"math"
	"math/rand/v2"
	"testing"
)

// winnerKept is the GPU sampler's winner check (sample_winner in
// codegen/cuda's sample.cu.tmpl) for a draw with top-p alone and any
// min-p, over l (after penalties and temperature; m the largest, finite):
// whether id is kept, from one pass's mass of the ids before it in the
// sorted order and every id's mass.
func winnerKept(l []float32, m float32, st *Step, id int32) bool {
	lk := drawKey(l[id], id)
	var above, total uint64
	for i, v := range l {
		q := mass(exp32(weightArg(v, m)))
		total += q
		if drawKey(v, int32(i)) > lk {
			above += q
		}
	}
	return float64(above) < float64(st.TopP)*float64(total) && exp32(weightArg(l[id], m)) >= st.MinP
}

// winnerVectors are logit vectors of n ids for the winner check's tests:
// normal at three spreads, flat, ties of a few values (top-p's boundary
// inside a run of equal logits), close values, one peak, −Inf and NaN
// among normal ones, and values whose weights underflow to no mass.
func winnerVectors(n int, r *rand.Rand) map[string][]float32 {
	shape := func(f func(i int) float64) []float32 {
		l := make([]float32, n)
		for i := range l {
			l[i] = float32(f(i))
		}
		return l
	}
	nonFinite := shape(func(int) float64 { return 2 * r.NormFloat64() })
	nonFinite[r.IntN(n)], nonFinite[r.IntN(n)] = float32(math.NaN()), float32(math.Inf(-1))
	return map[string][]float32{
		"normal σ 0.5": shape(func(int) float64 { return 0.5 * r.NormFloat64() }),
		"normal σ 4":   shape(func(int) float64 { return 4 * r.NormFloat64() }),
		"normal σ 15":  shape(func(int) float64 { return 15 * r.NormFloat64() }),
		"flat":         shape(func(int) float64 { return 1.5 }),
		"ties":         shape(func(int) float64 { return float64(r.IntN(4)) / 2 }),
		"close":        shape(func(int) float64 { return 1 + float64(r.IntN(8))*1e-6 }),
		"one peak": shape(func(i int) float64 {
			if i == n/3 {
				return 12
			}
			return r.NormFloat64()
		}),
		"nan and -inf": nonFinite,
		"underflow": shape(func(i int) float64 {
			if i%2 == 0 {
				return -200 - float64(i)
			}
			return r.NormFloat64()
		}),
	}
}

// TestWinnerRuleIsTheKeptSet: for every id of every vector, under top-p
// alone, with and without min-p, penalties and several
// temperatures, the winner check's one-pass rule (winnerKept) says kept
// exactly where runtime/sample's prefix and min-p keep the id (ties at
// the boundary, the boundary's own id, flat and peaked vectors); and
// where the largest z's id is kept, the draw is that id. Both outcomes
// occur for the drawn ids.
func TestWinnerRuleIsTheKeptSet(t *testing.T) {
	const n = 300
	r := rand.New(rand.NewPCG(9, 10))
	var ps []Params
	for _, temp := range []float32{0.3, 0.7, 1, 1.7} {
		for _, topP := range []float32{0.1, 0.5, 0.9, 0.999} {
			for _, minP := range []float32{0, 0.05, 0.6} {
				p := Params{Temperature: temp, TopP: topP, MinP: minP, Seed: r.Uint64()}
				if r.IntN(2) == 0 {
					p.RepetitionPenalty, p.FrequencyPenalty = 1.3, 0.2
				}
				ps = append(ps, p)
			}
		}
	}
	hits, misses := 0, 0
	for name, logits := range winnerVectors(n, r) {
		for _, p := range ps {
			s := New(p)
			recent := make([]int32, 20)
			for i := range recent {
				recent[i] = int32(r.IntN(n))
			}
			pos := r.IntN(1000)
			st := s.Step(recent, pos, n)
			// draw's steps 1 and 3: l and m.
			l := append([]float32(nil), logits...)
			for _, x := range st.Penalised {
				l[x.ID] = st.penalise(l[x.ID], x.Count)
			}
			m := float32(math.Inf(-1))
			for i, v := range l {
				l[i] = notNaN(v / st.Temperature)
				m = max(m, l[i])
			}
			if math.IsInf(float64(m), 0) {
				continue // the GPU checks only a finite m
			}
			kept := map[int32]bool{}
			for _, k := range s.prefix(l, m, &st) {
				if id := int32(uint32(k)); exp32(weightArg(l[id], m)) >= st.MinP {
					kept[id] = true
				}
			}
			for id := range int32(n) {
				if got := winnerKept(l, m, &st, id); got != kept[id] {
					t.Fatalf("%s %+v id %d (l %v): the rule says kept %v, the prefix %v", name, p, id, l[id], got, kept[id])
				}
			}
			// The largest z over every id, and the draw where it is kept.
			best := uint64(0)
			for i, v := range l {
				best = max(best, drawKey(noisy(v, m, st.Key, int32(i)), int32(i)))
			}
			win := KeyID(best)
			if !kept[win] {
				misses++
				continue
			}
			hits++
			if got := s.Sample(logits, recent, pos); got != win {
				t.Fatalf("%s %+v: the largest z's id %d is kept, the draw %d", name, p, win, got)
			}
		}
	}
	t.Logf("the largest z's id kept in %d draws, not in %d", hits, misses)
	if hits == 0 || misses == 0 {
		t.Errorf("kept %d, not kept %d: want both", hits, misses)
	}
}

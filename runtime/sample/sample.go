// Package sample picks the next token from a step's logits: greedy, or a
// seeded draw after penalties, temperature, top-k, top-p and min-p.
//
// A draw is exact Gumbel-max sampling (the argmax of logit/T + Gumbel noise
// over the kept candidates is distributed as their softmax) with the noise
// a function of (seed, position, id): no sort, no prefix sum in id order,
// no state carried from one token to the next. The order of operations,
// which the GPU sampler (codegen/cuda/templates/sample.cu.tmpl) reproduces
// bit for bit in float32 (detmath.go):
//
//  1. Penalties, over the distinct ids of the last PenaltyWindow tokens
//     (prompt included, ids outside the vocabulary ignored; llama.cpp's
//     window and rules): the repetition penalty divides a positive logit
//     and multiplies a non-positive one; then the frequency penalty times
//     the id's count in the window plus the presence penalty is subtracted
//     (OpenAI's rule, applied over the window).
//  2. Temperature 0: the largest logit wins (NaN counts as −Inf; the lowest
//     id on a tie). No noise is drawn.
//  3. Temperature: every logit is divided by it; NaN becomes −Inf. m is
//     the largest. Every id gets the weight w = e^(l−m) (exp32; 1 where
//     l = m, so also for +Inf logits when m is +Inf), a mass ⌊w·2³¹⌋, and
//     the noisy value z = l + g(id) (g: gumbel in detmath.go, keyed by
//     StepKey(seed, position)); when m is +Inf, z = g for the +Inf logits
//     and −Inf for the rest. If m is −Inf the draw returns id 0.
//  4. Candidates in sorted order: larger l first, the lower id on a tie.
//     Top-k keeps the first k. Top-p (0 < TopP < 1) keeps the shortest
//     prefix whose running mass, as a float64, reaches TopP·W, W the mass of
//     the top-k candidates (of all ids without top-k). The shorter of the
//     two prefixes stays.
//  5. Min-p keeps, of those, the ids with w ≥ MinP.
//  6. The kept id with the largest z wins (the lower id on a tie).
//
// Masses are integers so that every sum is the same in any order: the GPU
// finds the top-k and top-p boundaries by a radix select over the logits'
// ordered bits with parallel histograms (for top-k up to 64, from a bound
// on the k largest keys and their ranks), the CPU by sorting, and both land
// on the same prefix.
package sample

import (
	"fmt"
	"math"
	"slices"
)

// Params are the sampling settings of one request. The zero value is greedy
// decoding without penalty.
type Params struct {
	Temperature       float32 // 0 = greedy; at most 2
	TopK              int     // 0 = off
	TopP              float32 // 0 or 1 = off
	MinP              float32 // 0 = off
	RepetitionPenalty float32 // 1 (or 0, unset) = off
	FrequencyPenalty  float32 // subtracted once per occurrence in the window; [−2, 2]
	PresencePenalty   float32 // subtracted once if present in the window; [−2, 2]
	Seed              uint64
}

// PenaltyWindow is how many of the latest tokens (prompt included) the
// penalties look at, llama.cpp's default repeat_last_n.
const PenaltyWindow = 64

// Validate reports the first setting out of its range.
func (p Params) Validate() error {
	switch {
	case !(p.Temperature >= 0 && p.Temperature <= 2):
		return fmt.Errorf("sampling: temperature %v is outside [0, 2]", p.Temperature)
	case p.TopK < 0:
		return fmt.Errorf("sampling: top_k %d is negative", p.TopK)
	case !(p.TopP >= 0 && p.TopP <= 1):
		return fmt.Errorf("sampling: top_p %v is outside [0, 1]", p.TopP)
	case !(p.MinP >= 0 && p.MinP <= 1):
		return fmt.Errorf("sampling: min_p %v is outside [0, 1]", p.MinP)
	case !(p.RepetitionPenalty >= 0) || math.IsInf(float64(p.RepetitionPenalty), 0):
		return fmt.Errorf("sampling: repetition penalty %v must be a positive number (1 = off)", p.RepetitionPenalty)
	case !(p.FrequencyPenalty >= -2 && p.FrequencyPenalty <= 2):
		return fmt.Errorf("sampling: frequency penalty %v is outside [-2, 2]", p.FrequencyPenalty)
	case !(p.PresencePenalty >= -2 && p.PresencePenalty <= 2):
		return fmt.Errorf("sampling: presence penalty %v is outside [-2, 2]", p.PresencePenalty)
	}
	return nil
}

// Sampler draws tokens for one sequence with one request's settings; it
// holds scratch only, so it is not safe for concurrent use.
type Sampler struct {
	p     Params
	l     []float32
	keys  []uint64
	spare []uint64
}

// New returns a sampler for p; p should have passed Validate.
func New(p Params) *Sampler { return &Sampler{p: p} }

// Params are the settings s samples with.
func (s *Sampler) Params() Params { return s.p }

// Sample returns the token for position pos (the index the token will have
// in the sequence) from logits [vocab], penalising the ids in recent.
// logits is not modified. It returns -1 only for empty logits.
func (s *Sampler) Sample(logits []float32, recent []int32, pos int) int32 {
	if len(logits) == 0 {
		return -1
	}
	st := s.Step(recent, pos, len(logits))
	return s.draw(logits, &st)
}

// draw is steps 1 to 6 on the host.
func (s *Sampler) draw(logits []float32, st *Step) int32 {
	l := append(s.l[:0], logits...)
	s.l = l
	for _, p := range st.Penalised {
		l[p.ID] = st.penalise(l[p.ID], p.Count)
	}
	if st.Temperature == 0 {
		best := uint64(0)
		for i, v := range l {
			best = max(best, drawKey(notNaN(v), int32(i)))
		}
		return KeyID(best)
	}
	m := float32(math.Inf(-1))
	for i, v := range l {
		v = notNaN(v / st.Temperature)
		l[i] = v
		m = max(m, v)
	}
	if math.IsInf(float64(m), -1) {
		return 0
	}
	var kept []uint64
	if st.TopK > 0 || st.TopP > 0 {
		kept = s.prefix(l, m, st)
	} else {
		kept = s.candidates(l, false)
	}
	best := uint64(0)
	for _, k := range kept {
		id := int32(uint32(k))
		v := l[id]
		if st.MinP > 0 && !(exp32(weightArg(v, m)) >= st.MinP) {
			continue
		}
		best = max(best, drawKey(noisy(v, m, st.Key, id), id))
	}
	return KeyID(best)
}

// notNaN reads NaN as −Inf.
func notNaN(v float32) float32 {
	if v != v {
		return float32(math.Inf(-1))
	}
	return v
}

// weightArg is the exponent of step 3's weight: 0 where l = m.
func weightArg(l, m float32) float32 {
	if l == m {
		return 0
	}
	return l - m
}

// noisy is step 3's z.
func noisy(l, m float32, key uint64, id int32) float32 {
	if math.IsInf(float64(m), 1) {
		if l == m {
			return gumbel(key, id)
		}
		return float32(math.Inf(-1))
	}
	return l + gumbel(key, id)
}

// candidates returns every id as a sort key whose low half is the id and
// whose ascending order is step 4's sorted order; sorted only when asked
// (a draw over every id does not depend on their order).
func (s *Sampler) candidates(l []float32, sorted bool) []uint64 {
	keys := s.keys[:0]
	for i, v := range l {
		keys = append(keys, uint64(^orderedBits(v))<<32|uint64(i))
	}
	if sorted {
		keys, s.spare = radixSort(keys, s.spare)
	}
	s.keys = keys
	return keys
}

// prefix is step 4: the first candidates of the sorted order that top-k
// and top-p keep.
func (s *Sampler) prefix(l []float32, m float32, st *Step) []uint64 {
	keys := s.candidates(l, true)
	if k := int(st.TopK); k > 0 && k < len(keys) {
		keys = keys[:k]
	}
	if st.TopP == 0 {
		return keys
	}
	masses := make([]uint64, len(keys))
	var w uint64
	for i, k := range keys {
		masses[i] = mass(exp32(weightArg(l[uint32(k)], m)))
		w += masses[i]
	}
	target := float64(st.TopP) * float64(w)
	var run uint64
	for i, q := range masses {
		if run += q; float64(run) >= target {
			return keys[:i+1]
		}
	}
	return keys
}

// Step is one draw's settings as a device applies them: Params resolved for
// one position and one window of recent ids.
type Step struct {
	Temperature float32
	TopK        int32   // 0 = off (also when it would keep the whole vocabulary)
	TopP        float32 // 0 = off (also for 1)
	MinP        float32
	Repetition  float32 // 1 = off
	Frequency   float32
	Presence    float32
	Key         uint64      // StepKey(seed, pos)
	Penalised   []Penalised // the window's distinct ids, ascending; nil with no penalty
}

// Penalised is one id of the penalty window and its occurrences there.
type Penalised struct{ ID, Count int32 }

// Step resolves s's settings for the token at pos after recent (its last
// PenaltyWindow ids are the window) over a vocabulary of vocab.
func (s *Sampler) Step(recent []int32, pos, vocab int) Step {
	p := s.p
	st := Step{Temperature: p.Temperature, MinP: p.MinP, Repetition: p.RepetitionPenalty,
		Frequency: p.FrequencyPenalty, Presence: p.PresencePenalty, Key: StepKey(p.Seed, pos)}
	if p.TopK > 0 && p.TopK < vocab {
		st.TopK = int32(p.TopK)
	}
	if p.TopP > 0 && p.TopP < 1 {
		st.TopP = p.TopP
	}
	if st.Repetition == 0 {
		st.Repetition = 1
	}
	if st.Repetition == 1 && st.Frequency == 0 && st.Presence == 0 {
		return st
	}
	recent = recent[max(0, len(recent)-PenaltyWindow):]
	for _, id := range recent {
		if id >= 0 && int(id) < vocab {
			st.Penalised = append(st.Penalised, Penalised{ID: id, Count: 1})
		}
	}
	slices.SortFunc(st.Penalised, func(a, b Penalised) int { return int(a.ID - b.ID) })
	out := st.Penalised[:0]
	for _, x := range st.Penalised {
		if n := len(out); n > 0 && out[n-1].ID == x.ID {
			out[n-1].Count++
		} else {
			out = append(out, x)
		}
	}
	st.Penalised = out
	return st
}

// penalise is step 1 for one logit of an id seen count times.
func (st *Step) penalise(v float32, count int32) float32 {
	if st.Repetition != 1 {
		if v > 0 {
			v /= st.Repetition
		} else {
			v = mul(v, st.Repetition)
		}
	}
	if st.Frequency != 0 || st.Presence != 0 {
		v -= mul(float32(count), st.Frequency) + st.Presence
	}
	return v
}

// Greedy reports a step that takes the largest logit as it stands.
func (st *Step) Greedy() bool { return st.Temperature == 0 && len(st.Penalised) == 0 }

// Plain reports a draw over every id without penalty, filter or cut: the
// largest z over the logits as they stand, which a device can find where
// it computes the logits.
func (st *Step) Plain() bool {
	return st.Temperature > 0 && st.TopK == 0 && st.TopP == 0 && st.MinP == 0 && len(st.Penalised) == 0
}

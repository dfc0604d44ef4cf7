// Package sample picks the next token from a step's logits: greedy, or a
// seeded draw after repetition penalty, temperature, top-k, top-p and min-p.
//
// The exact order of operations, which the GPU sampler reproduces:
//
//  1. Repetition penalty: for each distinct id in recent (ids outside the
//     vocabulary are ignored), a positive logit is divided by the penalty and
//     a negative one multiplied by it (llama.cpp's rule), in float32.
//  2. Temperature 0: return the id of the largest logit (the lowest id on a
//     tie). No random number is drawn.
//  3. Temperature: every logit is divided by it, in float32.
//  4. Top-k: the candidates are ordered by logit, largest first, ties by
//     lower id; with TopK > 0 only the first TopK stay.
//  5. Softmax: each candidate gets the weight w = exp(l − l_max) in float64,
//     so the first candidate has w = 1; W is their sum in candidate order.
//  6. Top-p (0 < TopP < 1): keep the shortest prefix whose running sum of w
//     reaches TopP·W (at least one candidate).
//  7. Min-p (MinP > 0): keep the candidates with w ≥ MinP, i.e. with a
//     probability at least MinP times the most likely one's.
//  8. Draw: u from the generator of rng.go, target = u·Σw over the kept
//     candidates; the first candidate whose running sum exceeds target wins.
//
// Min-p and top-p both keep a prefix of the ordered candidates, so the
// implementation may apply min-p's bound before ordering without changing
// the result.
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
	Seed              uint64
}

// PenaltyWindow is how many of the latest tokens (prompt included) the
// repetition penalty looks at, llama.cpp's default repeat_last_n.
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
	}
	return nil
}

// Sampler draws tokens for one sequence; it is not safe for concurrent use.
type Sampler struct {
	p      Params
	rng    rng
	logits []float32
	cands  []candidate
	seen   map[int32]bool
}

type candidate struct {
	id    int32
	logit float32
	w     float64
}

// New returns a sampler for p; p should have passed Validate.
func New(p Params) *Sampler {
	return &Sampler{p: p, rng: newRNG(p.Seed), seen: map[int32]bool{}}
}

// Sample returns the next token id for logits [vocab], penalising the ids in
// recent. logits is not modified. It returns -1 only for empty logits.
func (s *Sampler) Sample(logits []float32, recent []int32) int32 {
	if len(logits) == 0 {
		return -1
	}
	l := append(s.logits[:0], logits...)
	s.logits = l
	s.penalise(l, recent)
	if s.p.Temperature == 0 {
		return argmax(l)
	}
	for i := range l {
		l[i] /= s.p.Temperature
	}
	c := s.order(l)
	if s.p.TopP > 0 && s.p.TopP < 1 {
		c = topP(c, s.p.TopP)
	}
	if s.p.MinP > 0 {
		c = minP(c, s.p.MinP)
	}
	return s.draw(c)
}

func (s *Sampler) penalise(l []float32, recent []int32) {
	rp := s.p.RepetitionPenalty
	if rp == 0 || rp == 1 {
		return
	}
	clear(s.seen)
	for _, id := range recent {
		if id < 0 || int(id) >= len(l) || s.seen[id] {
			continue
		}
		s.seen[id] = true
		if l[id] > 0 {
			l[id] /= rp
		} else {
			l[id] *= rp
		}
	}
}

func argmax(l []float32) int32 {
	best := 0
	for i, v := range l {
		if v > l[best] {
			best = i
		}
	}
	return int32(best)
}

// before orders candidates: larger logit first, then lower id.
func before(a, b candidate) bool {
	return a.logit > b.logit || (a.logit == b.logit && a.id < b.id)
}

// order returns the top-k candidates (all when TopK is off) in order with
// their softmax weights (steps 4 and 5).
func (s *Sampler) order(l []float32) []candidate {
	c := s.cands[:0]
	k := s.p.TopK
	if k > 0 && k < len(l) {
		c = topK(c, l, k)
	} else {
		// Without top-k every logit is a candidate; min-p's bound
		// (l ≥ l_max + ln MinP) drops the hopeless ones before sorting.
		lo := float32(math.Inf(-1))
		if s.p.MinP > 0 {
			lo = l[argmax(l)] + float32(math.Log(float64(s.p.MinP))) - 1e-3
		}
		for i, v := range l {
			if v >= lo {
				c = append(c, candidate{id: int32(i), logit: v})
			}
		}
	}
	slices.SortFunc(c, func(a, b candidate) int {
		if before(a, b) {
			return -1
		}
		if before(b, a) {
			return 1
		}
		return 0
	})
	s.cands = c
	top := float64(c[0].logit)
	for i := range c {
		c[i].w = math.Exp(float64(c[i].logit) - top)
	}
	return c
}

// topK appends the k best logits to c using a min-heap whose root is the
// worst candidate kept so far.
func topK(c []candidate, l []float32, k int) []candidate {
	for i, v := range l {
		x := candidate{id: int32(i), logit: v}
		if len(c) < k {
			c = append(c, x)
			for j := len(c) - 1; j > 0; {
				parent := (j - 1) / 2
				if !before(c[parent], c[j]) {
					break
				}
				c[parent], c[j] = c[j], c[parent]
				j = parent
			}
			continue
		}
		if !before(x, c[0]) {
			continue
		}
		c[0] = x
		for j := 0; ; {
			worst, a, b := j, 2*j+1, 2*j+2
			if a < k && before(c[worst], c[a]) {
				worst = a
			}
			if b < k && before(c[worst], c[b]) {
				worst = b
			}
			if worst == j {
				break
			}
			c[j], c[worst] = c[worst], c[j]
			j = worst
		}
	}
	return c
}

func topP(c []candidate, p float32) []candidate {
	total := 0.0
	for _, x := range c {
		total += x.w
	}
	target, run := float64(p)*total, 0.0
	for i, x := range c {
		run += x.w
		if run >= target {
			return c[:i+1]
		}
	}
	return c
}

func minP(c []candidate, p float32) []candidate {
	for i, x := range c {
		if x.w < float64(p) {
			return c[:max(i, 1)]
		}
	}
	return c
}

func (s *Sampler) draw(c []candidate) int32 {
	total := 0.0
	for _, x := range c {
		total += x.w
	}
	target, run := s.rng.float64()*total, 0.0
	for _, x := range c {
		run += x.w
		if target < run {
			return x.id
		}
	}
	return c[len(c)-1].id
}

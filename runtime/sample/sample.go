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
//  4. Candidates: every id, or with TopK > 0 the TopK largest logits (the
//     lower id first on a tie at the boundary). "Sorted order" below is
//     largest logit first, ties by lower id.
//  5. Softmax: each candidate gets the weight w = exp(l − l_max) in float64,
//     so the best has w = 1; W is their sum in id order.
//  6. Top-p (0 < TopP < 1): keep the shortest prefix in sorted order whose
//     running sum of w (in sorted order) reaches TopP·W.
//  7. Min-p (MinP > 0): keep the candidates with w ≥ MinP, i.e. with a
//     probability at least MinP times the most likely one's.
//  8. Draw: u from the generator of rng.go (exactly one per non-greedy
//     call), target = u·W_kept with W_kept the kept weights' sum in id
//     order; walking the kept candidates in sorted order, the first whose
//     running sum exceeds target wins (the last kept one if rounding leaves
//     target unreached).
//
// Sums of totals run in id order so that no step needs the whole
// vocabulary sorted: the kept set and the drawn token always lie in a prefix
// of the sorted order, so the implementation sorts only the candidates above
// a weight threshold, lowered until that prefix provably holds them. A
// vocabulary of 150k then costs a few linear passes, not a sort.
//
// A device that samples where its logits lie (the CUDA runtime, through
// runtime.SamplingSequence) returns exactly Sample's token, by this
// contract: greedy decoding is step 1 and 2 on the device (float32 IEEE
// operations, the same argmax and tie rule), an id back. A draw is steps 1
// and 3 on the device, which then hands back a Prefix (prefix.go): the best
// candidates in sorted order and its own sum of all weights. The host
// finishes with this file's code: the candidates' weights by the same
// math.Exp, every sum that decides the draw in the CPU's order, the same
// generator. Where the CPU's sum over the whole vocabulary enters, the host
// runs the draw at both ends of an interval that provably holds it and
// accepts the token only when both agree; otherwise (and for logits that
// are not all finite) the device copies the logits and Sample runs as on
// the CPU. Either way the token and the generator's state are Sample's.
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
	cands  []candidate // steps 4–5, id order
	sorted []candidate // a sorted prefix of cands
	keys   []uint64    // sort keys of sortedAbove
	spare  []uint64    // radix sort scratch
	byID   []candidate // scratch for id-order sums
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

// Params are the settings s samples with.
func (s *Sampler) Params() Params { return s.p }

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
	return s.draw(s.candidates(l))
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

// before is the sorted order: larger logit first, then lower id.
func before(a, b candidate) bool {
	return a.logit > b.logit || (a.logit == b.logit && a.id < b.id)
}

func compareSorted(a, b candidate) int {
	switch {
	case before(a, b):
		return -1
	case before(b, a):
		return 1
	}
	return 0
}

// candidates returns steps 4 and 5: the candidates in id order with their
// weights.
func (s *Sampler) candidates(l []float32) []candidate {
	c := s.cands[:0]
	if k := s.p.TopK; k > 0 && k < len(l) {
		c = topK(c, l, k)
		slices.SortFunc(c, func(a, b candidate) int { return int(a.id - b.id) })
	} else {
		for i, v := range l {
			c = append(c, candidate{id: int32(i), logit: v})
		}
	}
	s.cands = c
	top := c[0].logit
	for _, x := range c {
		top = max(top, x.logit)
	}
	for i := range c {
		c[i].w = math.Exp(float64(c[i].logit) - float64(top))
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

// thresholds are the weights (relative to the best, 1) above which draw
// first looks for the kept set: e^-1, e^-2, e^-4 ... e^-64, then everything.
var thresholds = func() []float64 {
	var t []float64
	for e := 1.0; e <= 64; e *= 2 {
		t = append(t, math.Exp(-e))
	}
	return append(t, 0)
}()

// draw applies top-p and min-p to c (id order) and draws (steps 6 to 8).
func (s *Sampler) draw(c []candidate) int32 {
	total := 0.0
	for _, x := range c {
		total += x.w
	}
	// Without top-p the kept set is known without sorting: w ≥ MinP.
	keptTotal := 0.0
	if !s.topP() {
		for _, x := range c {
			if x.w >= float64(s.p.MinP) {
				keptTotal += x.w
			}
		}
	}
	id, _, _ := s.drawFrom(&allCandidates{s: s, c: c}, total, keptTotal, s.rng.float64())
	return id
}

func (s *Sampler) topP() bool { return s.p.TopP > 0 && s.p.TopP < 1 }

// pool is what drawFrom reads of the candidates: the whole vocabulary
// (allCandidates), or a sorted prefix of it (prefix.go), which knows the
// mass and the candidates above a threshold only when the threshold lies
// inside it (known false).
type pool interface {
	// mass sums the weights ≥ tau in id order.
	mass(tau float64) (sum float64, known bool)
	// sortedAbove returns the candidates with w ≥ tau in sorted order.
	sortedAbove(tau float64) []candidate
	// first is the lowest candidate id.
	first() (id int32, known bool)
}

type allCandidates struct {
	s *Sampler
	c []candidate // id order
}

func (a *allCandidates) mass(tau float64) (float64, bool) {
	mass := 0.0
	for _, x := range a.c {
		if x.w >= tau {
			mass += x.w
		}
	}
	return mass, true
}

func (a *allCandidates) sortedAbove(tau float64) []candidate { return a.s.sortedAbove(a.c, tau) }
func (a *allCandidates) first() (int32, bool)                { return a.c[0].id, true }

// drawFrom is steps 6 to 8 given the sum of all weights (total), the sum
// of the kept weights without top-p (keptTotal, both in id order) and the
// uniform draw u. It returns the token and, with top-p, how many sorted
// candidates top-p kept; known is false when p does not know enough.
func (s *Sampler) drawFrom(p pool, total, keptTotal, u float64) (id int32, cut int, known bool) {
	topP := s.topP()
	minW := float64(s.p.MinP)
	for _, tau := range thresholds {
		// Below MinP nothing is kept, so MinP (or 0) is the last
		// threshold: there the prefix is the whole kept set.
		whole := tau <= minW
		tau = max(tau, minW)
		mass, ok := p.mass(tau)
		if !ok {
			return 0, 0, false
		}
		need := u * keptTotal
		if topP {
			need = float64(s.p.TopP) * total
		}
		if !whole && mass <= need {
			continue
		}
		kept := p.sortedAbove(tau)
		if len(kept) == 0 { // only when the logits hold NaN
			id, ok := p.first()
			return id, 0, ok
		}
		if topP {
			n, reached := runUntil(kept, float64(s.p.TopP)*total, false)
			if !reached && !whole {
				continue
			}
			kept = kept[:n]
			cut = n
			keptTotal = s.sumByID(kept)
		}
		n, reached := runUntil(kept, u*keptTotal, true)
		if reached || topP || whole {
			return kept[max(n, 1)-1].id, cut, true
		}
	}
	return 0, 0, false // unreachable: the last threshold is whole
}

// sortedAbove returns the candidates with w ≥ tau in sorted order. It sorts
// integer keys rather than calling compareSorted: the key's high half orders
// logits largest first and its low half is the index in c, which is in id
// order, so ascending keys are exactly the sorted order, ties included, at a
// fraction of the cost over a flat row of a large vocabulary.
func (s *Sampler) sortedAbove(c []candidate, tau float64) []candidate {
	keys := s.keys[:0]
	for i, x := range c {
		if x.w >= tau {
			keys = append(keys, uint64(^orderedBits(x.logit))<<32|uint64(i))
		}
	}
	keys, s.spare = radixSort(keys, s.spare)
	s.keys = keys
	out := s.sorted[:0]
	for _, k := range keys {
		out = append(out, c[uint32(k)])
	}
	s.sorted = out
	return out
}

// radixSort sorts keys ascending, least significant byte first, skipping
// bytes that are equal in every key (most of the index half). It returns the
// sorted slice and the scratch, either of which may be the input's array.
func radixSort(keys, scratch []uint64) (sorted, spare []uint64) {
	if cap(scratch) < len(keys) {
		scratch = make([]uint64, len(keys))
	}
	scratch = scratch[:len(keys)]
	for shift := uint(0); shift < 64; shift += 8 {
		var count [256]int
		for _, k := range keys {
			count[byte(k>>shift)]++
		}
		if len(keys) == 0 || count[byte(keys[0]>>shift)] == len(keys) {
			continue
		}
		pos := 0
		for b, n := range count {
			count[b] = pos
			pos += n
		}
		for _, k := range keys {
			d := byte(k >> shift)
			scratch[count[d]] = k
			count[d]++
		}
		keys, scratch = scratch, keys
	}
	return keys, scratch
}

// orderedBits maps a float32 to a uint32 whose unsigned order is the float
// order (negative values reversed; -0 maps as +0, since they compare equal;
// NaN never reaches here: its weight fails every w ≥ tau).
func orderedBits(f float32) uint32 {
	if f == 0 {
		f = 0
	}
	b := math.Float32bits(f)
	if b&(1<<31) != 0 {
		return ^b
	}
	return b | 1<<31
}

// runUntil walks c accumulating w and returns how many candidates it took
// for the running sum to reach target (to exceed it when strict), and
// whether it did; len(c) and false when it never does.
func runUntil(c []candidate, target float64, strict bool) (int, bool) {
	run := 0.0
	for i, x := range c {
		run += x.w
		if run > target || (!strict && run >= target) {
			return i + 1, true
		}
	}
	return len(c), false
}

// sumByID sums the weights of c in id order.
func (s *Sampler) sumByID(c []candidate) float64 {
	byID := append(s.byID[:0], c...)
	s.byID = byID
	slices.SortFunc(byID, func(a, b candidate) int { return int(a.id - b.id) })
	total := 0.0
	for _, x := range byID {
		total += x.w
	}
	return total
}

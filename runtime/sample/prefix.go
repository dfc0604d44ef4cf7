package sample

import (
	"math"
	"slices"
)

// Prefix is what a device that samples on its own (the CUDA runtime) hands
// back for a non-greedy draw instead of the vocabulary's logits: steps 1 and
// 3 done there, then the Len best candidates in sorted order (a prefix of
// the sorted order of the whole vocabulary: every candidate left out sorts
// after every one given) and the sum of all weights.
//
// Sum is the device's sum of exp(l − l_max) over the vocabulary, in its own
// order and with its own exp, so it is not the CPU's total (step 5 sums in id
// order). SampleFromPrefix uses it only as an interval that provably holds
// the CPU's total: the CPU's sum and the device's differ by at most
// (N−1)·2⁻⁵³ of the sum each (any order of positive terms), plus the two
// exps' error of a few ulp per weight; sumSlack bounds all of it. Every
// weight that decides the draw (the prefix's) and every sum over the prefix
// is computed here, by the CPU's code in the CPU's order.
type Prefix struct {
	IDs    []int32   // the best candidates in sorted order: largest logit first, ties by lower id
	Logits []float32 // their logits after penalty and temperature
	Vocab  int       // logits on the device
	Sum    float64   // Σ exp(l − l_max) over the vocabulary, on the device
}

// sumSlack is the relative bound on |the CPU's total − Prefix.Sum| for a
// vocabulary of n: 2(n−1)·2⁻⁵³ for the two summations and 16·2⁻⁵³ for exps
// off by up to 4 ulp each way, doubled.
func sumSlack(n int) float64 { return float64(4*n+64) * 0x1p-53 }

// tailSlack is how much above the prefix's last weight a left-out
// candidate's weight may lie: its logit is not larger, so its exact weight
// is not larger, and the exps are off by a few ulp.
const tailSlack = 0x1p-40

// SampleFromPrefix returns the token Sample would return for the logits the
// device holds, and true, when the prefix provably decides it; else false,
// and the caller must call Sample with the whole logits. Greedy decoding
// (Temperature 0) never gets here: the device's argmax is the answer. The
// generator advances exactly when the token is returned, so the stream of
// draws is the CPU's either way.
//
// The proof: with TopK set and the prefix holding the TopK candidates, the
// candidates are exactly the CPU's and the CPU's draw runs on them. Else
// drawFrom runs on the prefix twice, with the CPU's total replaced by each
// end of the interval Sum ± sumSlack; every decision it makes grows
// monotonically with the total (the weights being non-increasing along the
// prefix, which is checked), so the same token and top-p cut at both ends
// is the CPU's token. Thresholds below the prefix's last weight (where
// left-out candidates could count) end the proof unproven.
func (s *Sampler) SampleFromPrefix(p Prefix) (int32, bool) {
	if s.p.Temperature == 0 || len(p.IDs) == 0 || len(p.IDs) != len(p.Logits) || len(p.IDs) > p.Vocab ||
		!(p.Sum >= 1) || math.IsInf(p.Sum, 0) { // the best weight alone is 1
		return 0, false
	}
	complete := len(p.IDs) == p.Vocab
	if k := s.p.TopK; k > 0 && k < p.Vocab {
		if k > len(p.IDs) {
			return 0, false
		}
		p.IDs, p.Logits, complete = p.IDs[:k], p.Logits[:k], true
	}
	top := float64(p.Logits[0])
	pre := make([]candidate, len(p.IDs))
	for i, id := range p.IDs {
		pre[i] = candidate{id: id, logit: p.Logits[i], w: math.Exp(float64(p.Logits[i]) - top)}
		if i > 0 && !(pre[i].w <= pre[i-1].w) { // also refuses NaN
			return 0, false
		}
	}
	byID := slices.Clone(pre)
	slices.SortFunc(byID, func(a, b candidate) int { return int(a.id - b.id) })
	if complete { // the CPU's candidates exactly, in the CPU's id order
		return s.draw(byID), true
	}
	r := s.rng
	u := r.float64()
	pp := &prefixPool{sorted: pre, byID: byID, last: pre[len(pre)-1].w}
	lo, hi := p.Sum*(1-sumSlack(p.Vocab)), p.Sum*(1+sumSlack(p.Vocab))
	keptLo, keptHi := lo, hi
	if minW := float64(s.p.MinP); minW > 0 && !s.topP() {
		kept, known := pp.mass(minW)
		if !known {
			return 0, false
		}
		keptLo, keptHi = kept, kept
	}
	idLo, cutLo, okLo := s.drawFrom(pp, lo, keptLo, u)
	idHi, cutHi, okHi := s.drawFrom(pp, hi, keptHi, u)
	if !okLo || !okHi || idLo != idHi || cutLo != cutHi {
		return 0, false
	}
	s.rng = r
	return idLo, true
}

// prefixPool is a sorted prefix of the candidates: it knows the mass and the
// candidates above tau when no left-out candidate can reach tau.
type prefixPool struct {
	sorted, byID []candidate
	last         float64 // the prefix's smallest weight
}

func (p *prefixPool) inside(tau float64) bool { return p.last*(1+tailSlack) < tau }

func (p *prefixPool) mass(tau float64) (float64, bool) {
	if !p.inside(tau) {
		return 0, false
	}
	mass := 0.0
	for _, x := range p.byID {
		if x.w >= tau {
			mass += x.w
		}
	}
	return mass, true
}

func (p *prefixPool) sortedAbove(tau float64) []candidate {
	n := 0
	for n < len(p.sorted) && p.sorted[n].w >= tau {
		n++
	}
	return p.sorted[:n]
}

func (p *prefixPool) first() (int32, bool) { return 0, false }

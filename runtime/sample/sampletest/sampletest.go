// Package sampletest holds what the sampler's distribution tests on the CPU
// and on the GPU share: the exact distribution of a draw, written plainly in
// float64 from the settings' definitions (runtime/sample's package comment),
// and Pearson's chi-square test against it.
package sampletest

import (
	"fmt"
	"math"
	"slices"

	"github.com/llama-orch/orc/runtime/sample"
)

// Expected returns each id's probability under p for the token after recent:
// penalties, temperature, top-k, top-p and min-p applied to logits, then the
// softmax of what is kept, all in float64 but the float32 steps the
// definition fixes (penalties and the division by the temperature).
func Expected(logits []float32, p sample.Params, recent []int32) []float64 {
	l := slices.Clone(logits)
	penalise(l, p, recent)
	probs := make([]float64, len(l))
	if p.Temperature == 0 {
		best := -1
		for i, v := range l {
			if v != v {
				continue
			}
			if best < 0 || v > l[best] {
				best = i
			}
		}
		probs[max(best, 0)] = 1
		return probs
	}
	type cand struct {
		id int
		l  float64
	}
	c := make([]cand, len(l))
	for i, v := range l {
		x := float64(v / p.Temperature)
		if math.IsNaN(x) {
			x = math.Inf(-1)
		}
		c[i] = cand{i, x}
	}
	slices.SortStableFunc(c, func(a, b cand) int {
		switch {
		case a.l > b.l:
			return -1
		case a.l < b.l:
			return 1
		}
		return 0
	})
	m := c[0].l
	if math.IsInf(m, -1) {
		probs[0] = 1
		return probs
	}
	weight := func(x float64) float64 {
		if x == m {
			return 1
		}
		return math.Exp(x - m)
	}
	if p.TopK > 0 && p.TopK < len(c) {
		c = c[:p.TopK]
	}
	if p.TopP > 0 && p.TopP < 1 {
		total := 0.0
		for _, x := range c {
			total += weight(x.l)
		}
		run := 0.0
		for i, x := range c {
			if run += weight(x.l); run >= float64(p.TopP)*total {
				c = c[:i+1]
				break
			}
		}
	}
	sum := 0.0
	for _, x := range c {
		if w := weight(x.l); w >= float64(p.MinP) {
			probs[x.id] = w
			sum += w
		}
	}
	for i := range probs {
		probs[i] /= sum
	}
	return probs
}

func penalise(l []float32, p sample.Params, recent []int32) {
	rp := p.RepetitionPenalty
	if rp == 0 {
		rp = 1
	}
	if rp == 1 && p.FrequencyPenalty == 0 && p.PresencePenalty == 0 {
		return
	}
	count := map[int32]int{}
	for _, id := range recent[max(0, len(recent)-sample.PenaltyWindow):] {
		if id >= 0 && int(id) < len(l) {
			count[id]++
		}
	}
	for id, n := range count {
		v := l[id]
		if rp != 1 {
			if v > 0 {
				v /= rp
			} else {
				v = float32(v * rp)
			}
		}
		l[id] = v - (float32(float32(n)*p.FrequencyPenalty) + p.PresencePenalty)
	}
}

// ChiSquare compares observed counts with probs: ids with an expected count
// under 5 are pooled into one cell. It returns the p-value of Pearson's
// statistic, or an error where an id of probability 0 was drawn.
func ChiSquare(observed []int, probs []float64) (float64, error) {
	n := 0
	for _, o := range observed {
		n += o
	}
	stat, cells := 0.0, 0
	poolObs, poolExp := 0.0, 0.0
	for i, o := range observed {
		e := probs[i] * float64(n)
		if probs[i] == 0 {
			if o > 0 {
				return 0, fmt.Errorf("id %d drawn %d times with probability 0", i, o)
			}
			continue
		}
		if e < 5 {
			poolObs += float64(o)
			poolExp += e
			continue
		}
		stat += (float64(o) - e) * (float64(o) - e) / e
		cells++
	}
	if poolExp >= 5 {
		stat += (poolObs - poolExp) * (poolObs - poolExp) / poolExp
		cells++
	} else if poolExp > 0 && poolObs > 4*poolExp+10 {
		return 0, fmt.Errorf("%g draws of ids expected %.2g times in all", poolObs, poolExp)
	}
	if cells < 2 {
		return 1, nil
	}
	return upperGamma(float64(cells-1)/2, stat/2), nil
}

// upperGamma is the regularised upper incomplete gamma function Q(a, x):
// the chi-square survival function at 2x with 2a degrees of freedom (a
// series below a+1, a continued fraction above; Numerical Recipes 6.2).
func upperGamma(a, x float64) float64 {
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1.0; n < 1000; n++ {
			term *= x / (a + n)
			sum += term
			if term < sum*1e-15 {
				break
			}
		}
		return 1 - sum*math.Exp(-x+a*math.Log(x)-lg)
	}
	b := x + 1 - a
	c, d := 1/1e-300, 1/b
	h := d
	for i := 1.0; i < 1000; i++ {
		an := -i * (i - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < 1e-300 {
			d = 1e-300
		}
		c = b + an/c
		if math.Abs(c) < 1e-300 {
			c = 1e-300
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Exp(-x+a*math.Log(x)-lg) * h
}

// Vector is a named logit vector of the distribution tests.
type Vector struct {
	Name   string
	Logits []float32
}

// Vectors are the distribution tests' logit shapes over n ids (n ≥ 16):
// flat, peaked, with ties, with NaN and −Inf, and with two +Inf.
func Vectors(n int) []Vector {
	r := uint64(0x2545F4914F6CDD1D)
	normal := func() float64 { // Box–Muller over a fixed xorshift stream
		next := func() float64 {
			r ^= r >> 12
			r ^= r << 25
			r ^= r >> 27
			return (float64((r*0x2545F4914F6CDD1D)>>11) + 0.5) / (1 << 53)
		}
		return math.Sqrt(-2*math.Log(next())) * math.Cos(2*math.Pi*next())
	}
	shape := func(f func(i int) float64) []float32 {
		l := make([]float32, n)
		for i := range l {
			l[i] = float32(f(i))
		}
		return l
	}
	flat := shape(func(int) float64 { return 0.3 * normal() })
	peaked := shape(func(int) float64 { return 4 * normal() })
	ties := shape(func(int) float64 { return math.Round(2*normal()) / 2 })
	nonFinite := shape(func(int) float64 { return normal() })
	nonFinite[1], nonFinite[n/2] = float32(math.NaN()), float32(math.Inf(-1))
	nonFinite[n-1] = float32(math.NaN())
	posInf := shape(func(int) float64 { return normal() })
	posInf[3], posInf[n-2] = float32(math.Inf(1)), float32(math.Inf(1))
	return []Vector{{"flat", flat}, {"peaked", peaked}, {"ties", ties}, {"nan and -inf", nonFinite}, {"two +inf", posInf}}
}

// Settings are the distribution tests' sampling settings, with the recent
// ids their penalties read.
func Settings(n int) ([]sample.Params, []int32) {
	recent := []int32{0, 2, 2, 5, int32(n - 1), int32(n + 3), 7, 7, 7}
	return []sample.Params{
		{Temperature: 1},
		{Temperature: 0.7, TopP: 0.9},
		{Temperature: 0.7, TopK: 5, RepetitionPenalty: 1.3},
		{Temperature: 1.5, MinP: 0.05},
		{Temperature: 1, TopK: 6, TopP: 0.8, MinP: 0.02},
		{Temperature: 0.5, TopP: 0.5, FrequencyPenalty: 0.5, PresencePenalty: -0.3},
	}, recent
}

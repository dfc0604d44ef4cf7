package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// devicePrefix is the CPU reference of the CUDA sampler's non-greedy part
// (codegen/cuda/templates/sample.cu.tmpl): penalty and temperature in
// float32, then the candidates whose logit is strictly above the (cap+1)-th
// best (all when the vocabulary has at most cap), sorted, and the sum of all
// weights in an order other than the CPU's (reversed), as the device's is.
func devicePrefix(logits []float32, recent []int32, p Params, capacity int) Prefix {
	l := slices.Clone(logits)
	New(p).penalise(l, recent)
	for i := range l {
		l[i] /= p.Temperature
	}
	order := make([]int32, len(l))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return compareSorted(candidate{id: a, logit: l[a]}, candidate{id: b, logit: l[b]})
	})
	n := len(order)
	if n > capacity {
		cut := orderedBits(l[order[capacity]])
		n = 0
		for orderedBits(l[order[n]]) > cut {
			n++
		}
	}
	pre := Prefix{Vocab: len(l)}
	for _, id := range order[:n] {
		pre.IDs = append(pre.IDs, id)
		pre.Logits = append(pre.Logits, l[id])
	}
	top := float64(l[order[0]])
	for i := len(l) - 1; i >= 0; i-- {
		pre.Sum += math.Exp(float64(l[i]) - top)
	}
	return pre
}

// randomLogits draws a vocabulary of logits: normal with the given spread,
// and with ties when levels > 0 (values rounded to that many steps).
func randomLogits(r *rand.Rand, vocab int, spread float64, levels int) []float32 {
	l := make([]float32, vocab)
	for i := range l {
		v := r.NormFloat64() * spread
		if levels > 0 {
			v = math.Round(v*float64(levels)/spread) * spread / float64(levels)
		}
		l[i] = float32(v)
	}
	return l
}

// TestSampleFromPrefixMatchesSample: whenever the prefix proves a token it
// is Sample's, over every combination of settings, spreads, ties and prefix
// sizes, several steps in a row (so the generators must stay in step); a
// fallback runs Sample on the same sampler, as the runtime does.
func TestSampleFromPrefixMatchesSample(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	proven, fallbacks := map[bool]int{}, map[bool]int{}
	for _, vocab := range []int{3, 300, 5000} {
		for _, spread := range []float64{0.3, 3, 12} {
			for _, levels := range []int{0, 8} {
				for _, capacity := range []int{4, 64, 1024} {
					for _, temp := range []float32{0.4, 1.7} {
						for _, topK := range []int{0, 1, 3, 40, 2000} {
							for _, topP := range []float32{0, 0.5, 0.95, 1} {
								for _, minP := range []float32{0, 0.05, 0.5} {
									p := Params{Temperature: temp, TopK: topK, TopP: topP, MinP: minP,
										RepetitionPenalty: []float32{1, 1.3}[r.IntN(2)], Seed: r.Uint64()}
									cpu, dev := New(p), New(p)
									peaked := spread == 12 && capacity == 1024
									for range 2 {
										l := randomLogits(r, vocab, spread, levels)
										recent := []int32{int32(r.IntN(vocab)), int32(r.IntN(vocab)), -1, int32(vocab), 0, 0}
										want := cpu.Sample(l, recent)
										got, ok := dev.SampleFromPrefix(devicePrefix(l, recent, p, capacity))
										if !ok {
											got = dev.Sample(l, recent)
											fallbacks[peaked]++
										} else {
											proven[peaked]++
										}
										if got != want {
											t.Fatalf("vocab %d spread %v levels %d cap %d %+v: prefix gives %d, Sample %d (proven %v)",
												vocab, spread, levels, capacity, p, got, want, ok)
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("peaked logits, cap 1024: %d proven, %d fallbacks; others: %d proven, %d fallbacks",
		proven[true], fallbacks[true], proven[false], fallbacks[false])
	// Peaked logits are what a trained model gives: the prefix must decide
	// nearly every draw there, or the device path saves nothing.
	if proven[true] < 9*fallbacks[true] {
		t.Errorf("peaked logits: only %d of %d draws proven from the prefix", proven[true], proven[true]+fallbacks[true])
	}
}

// TestSampleFromPrefixFallsBack: a flat vocabulary with no top-k, top-p or
// min-p draws from the whole vocabulary, so a short prefix cannot hold most
// draws and must say so rather than guess; the generator stays where it was.
func TestSampleFromPrefixFallsBack(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	p := Params{Temperature: 1, Seed: 5}
	dev, cpu := New(p), New(p)
	fallbacks := 0
	for range 50 {
		l := randomLogits(r, 4000, 0.1, 0)
		want := cpu.Sample(l, nil)
		got, ok := dev.SampleFromPrefix(devicePrefix(l, nil, p, 16))
		if !ok {
			fallbacks++
			got = dev.Sample(l, nil)
		}
		if got != want {
			t.Fatalf("got %d, want %d (proven %v)", got, want, ok)
		}
	}
	if fallbacks < 40 {
		t.Fatalf("%d of 50 draws over a flat vocabulary were proven from 16 candidates", 50-fallbacks)
	}
}

// TestSampleFromPrefixRefusesBadSums: a sum that cannot be the device's
// (NaN, infinite, below the best weight) ends the proof.
func TestSampleFromPrefixRefusesBadSums(t *testing.T) {
	l := randomLogits(rand.New(rand.NewPCG(3, 4)), 100, 5, 0)
	p := Params{Temperature: 1, TopP: 0.9}
	for _, sum := range []float64{math.NaN(), math.Inf(1), 0.5} {
		pre := devicePrefix(l, nil, p, 10)
		pre.Sum = sum
		if _, ok := New(p).SampleFromPrefix(pre); ok {
			t.Errorf("sum %v: a token was proven", sum)
		}
	}
}

package sample

import (
	"math/rand"
	"slices"
	"testing"
)

func TestRadixSortMatchesSort(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, n := range []int{0, 1, 2, 17, 1000, 70000} {
		keys := make([]uint64, n)
		for i := range keys {
			// logit-like high halves with many repeats, index-like low halves
			keys[i] = uint64(r.Intn(300)+1<<30)<<32 | uint64(r.Intn(1<<18))
		}
		want := slices.Clone(keys)
		slices.Sort(want)
		got, _ := radixSort(slices.Clone(keys), nil)
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: radix order differs from slices.Sort", n)
		}
	}
}

func TestOrderedBitsOrder(t *testing.T) {
	vals := []float32{-3e38, -2.5, -1, -1e-30, 0, 1e-30, 0.5, 1, 7, 3e38}
	for i := 1; i < len(vals); i++ {
		if orderedBits(vals[i-1]) >= orderedBits(vals[i]) {
			t.Fatalf("orderedBits(%v) ≥ orderedBits(%v)", vals[i-1], vals[i])
		}
	}
	negZero := float32(0)
	negZero = -negZero
	if orderedBits(negZero) != orderedBits(0) {
		t.Fatal("-0 and +0 compare equal as logits but get different keys")
	}
}

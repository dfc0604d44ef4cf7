package cuda

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The GPU sampler's bound for top-k up to topkMax (sample_topk in
// codegen/cuda's sample.cu.tmpl), mirrored on the host: which keys its
// blocks list, and so whether it draws or leaves the draw to the general
// path.
const (
	topkMax   = 64  // SAMPLE_TOPK_MAX
	topkChunk = 8   // SAMPLE_TOPK_CHUNK
	topkCap   = 512 // SAMPLE_TOPK_CAP
	topkRoom  = 32  // SAMPLE_TOPK_ROOM
)

// topkPublished is SAMPLE_TOPK_PUB: how many keys each of g blocks
// publishes.
func topkPublished(g int) int {
	switch {
	case g >= 32:
		return 2
	case g >= 16:
		return 4
	}
	return 8
}

// sampleKey is the sampler's key of l for id (sample_key): l's ordered
// bits (−0 as +0; NaN is −Inf) over the inverted id, so that the larger
// key comes first in the CPU's sorted order.
func sampleKey(l float32, id int) uint64 {
	if l != l {
		l = float32(math.Inf(-1))
	}
	b := math.Float32bits(l)
	switch {
	case l == 0:
		b = 0x80000000
	case b&0x80000000 != 0:
		b = ^b
	default:
		b |= 0x80000000
	}
	return uint64(b)<<32 | uint64(0xFFFFFFFF-uint32(id))
}

// topkListed returns the keys sample_topk lists for top-k k over l (the
// logits after penalties and temperature) with g blocks, and whether they
// fit its list (else the general path draws): block b holds every g-th run
// of topkChunk ids from run b and publishes its topkPublished(g) largest
// keys; the listed keys are those at least the k-th largest published one
// (all of them where fewer than k are published); they fit where no block
// lists more than topkRoom and all of them are at most topkCap.
func topkListed(l []float32, k, g int) ([]uint64, bool) {
	p := topkPublished(g)
	blocks := make([][]uint64, g)
	keys := make([]uint64, len(l))
	for id, v := range l {
		keys[id] = sampleKey(v, id)
		b := id / topkChunk % g
		blocks[b] = append(blocks[b], keys[id])
	}
	var pub []uint64
	for _, bk := range blocks {
		slices.Sort(bk)
		pub = append(pub, bk[max(0, len(bk)-p):]...)
	}
	slices.Sort(pub)
	t := uint64(0)
	if len(pub) >= k {
		t = pub[len(pub)-k]
	}
	var listed []uint64
	most := make([]int, g)
	for id, x := range keys {
		if x >= t {
			listed = append(listed, x)
			most[id/topkChunk%g]++
		}
	}
	return listed, slices.Max(most) <= topkRoom && len(listed) <= topkCap
}

// topkVector is a logit vector for the top-k path's tests; crowded says
// its large logits all lie in one block's runs, so that for k above
// topkPublished that block lists too many and the general path draws.
type topkVector struct {
	name    string
	l       []float32
	crowded bool
}

// topkVectors are logit vectors of vocab ids for a sampler of g blocks:
// normal at three spreads, flat, ties, close runs of ties, non-finite
// values, the distribution tests' shape (32 logits, the rest −100), every
// logit −Inf, and one whose large logits crowd into block 0's runs.
func topkVectors(vocab, g int, r *rand.Rand) []topkVector {
	shape := func(f func(i int) float64) []float32 {
		l := make([]float32, vocab)
		for i := range l {
			l[i] = float32(f(i))
		}
		return l
	}
	nonFinite := shape(func(int) float64 { return 4 * r.NormFloat64() })
	nonFinite[r.IntN(vocab)], nonFinite[r.IntN(vocab)] = float32(math.NaN()), float32(math.Inf(-1))
	posInf := shape(func(int) float64 { return 4 * r.NormFloat64() })
	posInf[r.IntN(vocab)], posInf[r.IntN(vocab)] = float32(math.Inf(1)), float32(math.Inf(1))
	crowded := shape(func(i int) float64 {
		if run := i / topkChunk; run%g == 0 && run < 200*g {
			return 5 + r.NormFloat64()
		}
		return -1
	})
	return []topkVector{
		{"normal σ 0.5", shape(func(int) float64 { return 0.5 * r.NormFloat64() }), false},
		{"normal σ 4", shape(func(int) float64 { return 4 * r.NormFloat64() }), false},
		{"normal σ 15", shape(func(int) float64 { return 15 * r.NormFloat64() }), false},
		{"flat", shape(func(int) float64 { return 1 }), false},
		{"ties", shape(func(int) float64 { return math.Round(4*r.NormFloat64()) / 4 }), false},
		{"close runs of ties", shape(func(int) float64 { return math.Round(4096*r.NormFloat64()) / 1024 }), false},
		{"nan and -inf", nonFinite, false},
		{"two +inf", posInf, false},
		{"32 logits, the rest -100", shape(func(i int) float64 {
			if i < 32 {
				return r.NormFloat64()
			}
			return -100
		}), false},
		{"every logit -inf", shape(func(int) float64 { return math.Inf(-1) }), false},
		{"crowded into block 0", crowded, true},
	}
}

// TestTopKBoundListsTheTopK: for the samplers of Qwen's, Llama 3's and
// Phi-3's vocabularies, the keys sample_topk lists hold the k largest
// (the CPU sampler's top-k prefix) for every vector and k up to topkMax;
// they fit its list but where the large logits crowd into one block and k
// passes what a block publishes, where the general path draws instead (and
// for a vocabulary of one block, where k passes what it publishes).
func TestTopKBoundListsTheTopK(t *testing.T) {
	for _, c := range []struct{ vocab, g int }{{151936, 64}, {128256, 63}, {32064, 16}, {512, 1}} {
		r := rand.New(rand.NewPCG(uint64(c.vocab), 1))
		for _, v := range topkVectors(c.vocab, c.g, r) {
			keys := make([]uint64, len(v.l))
			for id, x := range v.l {
				keys[id] = sampleKey(x, id)
			}
			slices.Sort(keys)
			most := 0
			for _, k := range []int{1, 2, 5, 40, topkMax} {
				listed, fits := topkListed(v.l, k, c.g)
				for _, x := range keys[len(keys)-k:] {
					if !slices.Contains(listed, x) {
						t.Fatalf("vocab %d, %s, k %d: the list lacks the top-k key %#x", c.vocab, v.name, k, x)
					}
				}
				if want := (!v.crowded && c.g > 1) || k <= topkPublished(c.g); fits != want {
					t.Errorf("vocab %d, %s, k %d: %d listed, fit: %v, want %v", c.vocab, v.name, k, len(listed), fits, want)
				}
				if fits {
					most = max(most, len(listed))
				}
			}
			t.Logf("vocab %d, %s: at most %d listed where they fit", c.vocab, v.name, most)
		}
	}
}

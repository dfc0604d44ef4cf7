package cuda

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/llama-orch/orc/runtime/sample"
)

// TestGPUSampleTopKPath: draws with top-k up to topkMax (with and without
// top-p and min-p, at three temperatures, some with penalties on the
// largest logits' ids) over topkVectors draw the CPU sampler's ids, alone
// and after the LM head's picks; topkListed says which draws the top-k
// path ends and which it leaves to the general path (a vector crowded
// into one block, or k past what one block publishes), and both must
// occur.
func TestGPUSampleTopKPath(t *testing.T) {
	for _, dir := range samplePlans(t) {
		d, seq := openSamplePlan(t, dir)
		vocab, g := d.plan.Manifest.Model.Vocab, d.sampling.k.Draw.Grid
		r := rand.New(rand.NewPCG(37, 38))
		var ps []sample.Params
		for i, k := range []int{1, 2, 5, 40, topkMax} {
			for j, topP := range []float32{0, 0.5, 0.9} {
				for _, minP := range []float32{0, 0.05} {
					p := sample.Params{Temperature: []float32{0.3, 0.7, 1.5}[(i+j)%3], TopK: k, TopP: topP, MinP: minP, Seed: r.Uint64()}
					if (i+j)%2 == 1 {
						p.RepetitionPenalty, p.PresencePenalty = 1.3, 0.4
					}
					ps = append(ps, p)
				}
			}
		}
		fast, general, draws := 0, 0, 0
		for _, v := range topkVectors(vocab, g, r) {
			// The penalised ids: the three largest logits' among others.
			keys, _ := topkListed(v.l, 3, g)
			slices.Sort(keys)
			recent := make([]int32, 0, sample.PenaltyWindow)
			for _, x := range keys[len(keys)-3:] {
				recent = append(recent, sample.KeyID(x))
			}
			for len(recent) < sample.PenaltyWindow {
				recent = append(recent, int32(r.IntN(vocab)))
			}
			loaded := false
			for _, p := range ps {
				cpu := sample.New(p)
				pos := r.IntN(4096)
				want := cpu.Sample(v.l, recent, pos)
				logits := v.l
				if loaded {
					logits = nil // already there
				}
				loaded = true
				if got := drawOnGPU(t, seq, logits, cpu, recent, pos); got != want {
					t.Fatalf("%s %s %+v: GPU %d, CPU %d", dir, v.name, p, got, want)
				}
				st := cpu.Step(recent, pos, vocab)
				if got := drawAfterHead(t, seq, nil, headPicksOf(v.l, &st), cpu, recent, pos); got != want {
					t.Fatalf("%s %s %+v, after the head's picks: GPU %d, CPU %d", dir, v.name, p, got, want)
				}
				draws += 2
				if len(st.Penalised) == 0 {
					l := make([]float32, len(v.l))
					for i, x := range v.l {
						l[i] = x / p.Temperature
					}
					if _, fits := topkListed(l, p.TopK, g); fits {
						fast++
					} else {
						general++
					}
				}
			}
		}
		t.Logf("%s: %d draws, each the CPU's; without penalties, %d on the top-k path, %d left to the general path (topkListed)", dir, draws, fast, general)
		if fast == 0 || general == 0 {
			t.Errorf("%s: %d draws on the top-k path, %d on the general path: want both", dir, fast, general)
		}
	}
}

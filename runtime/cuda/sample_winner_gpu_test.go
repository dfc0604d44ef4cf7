package cuda

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/llama-orch/orc/runtime/sample"
)

// scratchBest is where SampleScratch (sample.cu.tmpl) holds best, the key
// every histogram path of sample_general maxes its pick with (and zeroes),
// which the winner check never reads.
const scratchBest = 272

// setScratchBest writes key into the sampler scratch's best.
func setScratchBest(t *testing.T, seq *sequence, key uint64) {
	t.Helper()
	if err := seq.d.g.copyHtoD(seq.d.sampling.scratch+scratchBest, binary.LittleEndian.AppendUint64(nil, key)); err != nil {
		t.Fatal(err)
	}
}

// TestGPUSampleWinner: draws with top-p alone (the general path's winner
// check, sample_winner), with and without
// min-p and penalties, after the LM head's picks, draw the CPU sampler's
// ids both where the largest z over every id is kept (the check's early
// end) and where it is not (the histogram path after it); both must occur
// over finite vectors. The id of the largest z is the CPU's draw with no
// filter, so it is kept exactly where the filtered draw equals it. Which
// branch the GPU took shows in a second draw over finite vectors with the
// scratch's best set to another id's key at the largest value: the winner
// check ignores it, the histogram path returns that id.
func TestGPUSampleWinner(t *testing.T) {
	for _, dir := range samplePlans(t) {
		d, seq := openSamplePlan(t, dir)
		vocab, g := d.plan.Manifest.Model.Vocab, d.sampling.k.Draw.Grid
		r := rand.New(rand.NewPCG(41, 42))
		var ps []sample.Params
		for i, topP := range []float32{0.3, 0.5, 0.9, 0.99} {
			for j, minP := range []float32{0, 0.05} {
				p := sample.Params{Temperature: []float32{0.7, 1, 1.5}[(i+j)%3], TopP: topP, MinP: minP}
				if (i+j)%2 == 1 {
					p.RepetitionPenalty, p.PresencePenalty = 1.3, 0.4
				}
				ps = append(ps, p)
			}
		}
		kept, notKept := 0, 0
		for _, v := range topkVectors(vocab, g, r) {
			finite := true
			for _, x := range v.l {
				finite = finite && !math.IsInf(float64(x), 0) && !math.IsNaN(float64(x))
			}
			recent := make([]int32, sample.PenaltyWindow)
			for i := range recent {
				recent[i] = int32(r.IntN(vocab))
			}
			loaded := false
			for _, p := range ps {
				for range 6 {
					p.Seed = r.Uint64()
					pos := r.IntN(4096)
					cpu := sample.New(p)
					want := cpu.Sample(v.l, recent, pos)
					plain := p
					plain.TopK, plain.TopP, plain.MinP = 0, 0, 0
					won := sample.New(plain).Sample(v.l, recent, pos) == want
					logits := v.l
					if loaded {
						logits = nil // already there
					}
					loaded = true
					st := cpu.Step(recent, pos, vocab)
					if got := drawAfterHead(t, seq, logits, headPicksOf(v.l, &st), cpu, recent, pos); got != want {
						t.Fatalf("%s %s %+v (largest z kept: %v): GPU %d, CPU %d", dir, v.name, p, won, got, want)
					}
					if !finite {
						continue
					}
					other := (want + 1) % int32(vocab)
					setScratchBest(t, seq, 0xFFFFFFFF<<32|uint64(0xFFFFFFFF-uint32(other)))
					got := drawAfterHead(t, seq, nil, headPicksOf(v.l, &st), cpu, recent, pos)
					if won {
						setScratchBest(t, seq, 0) // the winner check leaves best as it found it
						kept++
					} else {
						notKept++
					}
					if branch := map[bool]int32{true: want, false: other}[won]; got != branch {
						t.Fatalf("%s %s %+v (largest z kept: %v), best set to %d's key: GPU %d, want %d (the %s)", dir, v.name, p, won, other, got, branch,
							map[bool]string{true: "winner check's early end", false: "histogram path's pick, maxed with best"}[won])
					}
				}
			}
		}
		t.Logf("%s: over finite vectors the largest z's id kept in %d draws, not in %d; every draw the CPU's", dir, kept, notKept)
		if kept == 0 || notKept == 0 {
			t.Errorf("%s: the largest z's id kept in %d draws, not in %d: want both", dir, kept, notKept)
		}
	}
}

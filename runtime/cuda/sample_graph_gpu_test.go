package cuda

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/llama-orch/orc/runtime/sample"
)

// TestGPUDecodeDrawsInGraph: a decode step whose token the sampler draws
// (every filter and penalty, and greedy on a plan whose head leaves no
// picks) is one launch call, the graph that ends with the sampler, and its
// token is the CPU sampler's over the step's logits; greedy and plain steps
// of a head that leaves picks are one launch call too. Replaying a drawn
// step's graph (ReplayDecode) leaves the same pick, and the steps after it
// still draw the CPU's tokens: every replay leaves the scratch as it found
// it.
func TestGPUDecodeDrawsInGraph(t *testing.T) {
	for _, dir := range samplePlans(t) {
		d, seq := openSamplePlan(t, dir)
		history := fedRandom(t, seq, 12, 21)
		d.g.faults = &faults{launchAt: math.MaxInt64, killAt: -1} // counts launch calls, fails none
		settings := []sample.Params{{}, {Temperature: 0.8, Seed: 3}, {Temperature: 0.7, TopP: 0.9, Seed: 4},
			{Temperature: 0.7, TopK: 40, RepetitionPenalty: 1.1, Seed: 5}, {Temperature: 1, MinP: 0.05, Seed: 6},
			{Temperature: 1.2, TopK: 5000, TopP: 0.95, FrequencyPenalty: 0.3, PresencePenalty: 0.2, Seed: 7},
			{RepetitionPenalty: 1.3}}
		drew := 0
		for step := range 3 * len(settings) {
			p := settings[step%len(settings)]
			sm := sample.New(p)
			recent := history[max(0, len(history)-sample.PenaltyWindow):]
			before := d.g.faults.launches.Load()
			id, err := seq.ForwardSample(context.Background(), history[len(history)-1:], sm, recent)
			if err != nil {
				t.Fatal(err)
			}
			// A graph's first step captures it (2 launch calls on the H200);
			// every later one replays it alone.
			if calls := d.g.faults.launches.Load() - before; step >= len(settings) && calls != 1 {
				t.Errorf("%s step %d (%+v): %d launch calls, want 1 (the decode graph, the draw inside it)", dir, step, p, calls)
			}
			logits, err := seq.hostLogits()
			if err != nil {
				t.Fatal(err)
			}
			if want := sm.Sample(logits, recent, seq.pos); id != want {
				t.Fatalf("%s step %d (%+v): GPU %d, CPU %d", dir, step, p, id, want)
			}
			if seq.drew {
				drew++
			}
			if seq.drew && step%3 == 0 {
				if ok, err := seq.ReplayDecode(3); err != nil || !ok {
					t.Fatalf("%s step %d: replay %v, %v", dir, step, ok, err)
				}
				if again, err := seq.drawn(); err != nil || again != id {
					t.Fatalf("%s step %d: the replayed draw picked %d (%v), the step %d", dir, step, again, err, id)
				}
			}
			history = append(history, id)
		}
		if drew < 4*3 {
			t.Errorf("%s: %d steps drew in the decode graph, want at least the 12 of the filters and penalties", dir, drew)
		}
	}
}

// TestGPUDrawInGraphCost times 200 back-to-back replays of one decode
// step's graph (ReplayDecode) with each bench setting's draw against the
// greedy step's: what a draw adds to a step on the GPU, without the host's
// work between steps; greedy with a penalty runs the sampler's shortest
// path, its floor. top_k 65 is past the top-k path's bound (sample_topk):
// the general path's top-k, which top_k 40 took before that path, beside
// it in the same run. ORC_GPU_BENCH=1; it prints, asserts nothing about
// speed.
func TestGPUDrawInGraphCost(t *testing.T) {
	if os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("set ORC_GPU_TESTS=1 ORC_GPU_BENCH=1 and ORC_SAMPLE_PLANS on a GPU host")
	}
	const replays = 200
	for _, dir := range samplePlans(t) {
		_, seq := openSamplePlan(t, dir)
		history := fedRandom(t, seq, 64, 31)
		greedyUs := 0.0
		for _, p := range []sample.Params{{}, {Temperature: 1, Seed: 1}, {Temperature: 0.7, TopP: 0.9, Seed: 1},
			{Temperature: 0.7, TopK: 40, RepetitionPenalty: 1.1, Seed: 1}, {Temperature: 0.7, TopK: topkMax + 1, RepetitionPenalty: 1.1, Seed: 1},
			{Temperature: 0.7, TopK: 40, TopP: 0.9, Seed: 1}, {Temperature: 0.7, TopK: topkMax + 1, TopP: 0.9, Seed: 1},
			{Temperature: 1, MinP: 0.05, Seed: 1}, {RepetitionPenalty: 1.1}} {
			id, err := seq.ForwardSample(context.Background(), history[len(history)-1:], sample.New(p), history)
			if err != nil {
				t.Fatal(err)
			}
			history = append(history[1:], id)
			var ts []float64
			for range 5 {
				start := time.Now()
				if ok, err := seq.ReplayDecode(replays); err != nil || !ok {
					t.Fatalf("%s %+v: replay %v, %v", dir, p, ok, err)
				}
				ts = append(ts, time.Since(start).Seconds()*1e6/replays)
			}
			slices.Sort(ts)
			us := ts[len(ts)/2]
			if greedyUs == 0 {
				greedyUs = us
			}
			t.Logf("%s T %.1f top_k %2d top_p %.1f min_p %.2f rep %.1f: %7.1f µs a step (greedy %+6.1f µs), the draw in the graph: %v",
				dir, p.Temperature, p.TopK, p.TopP, p.MinP, p.RepetitionPenalty, us, us-greedyUs, seq.drew)
		}
	}
}

// fedRandom feeds seq n random ids (seeded by seed) and returns them.
func fedRandom(t *testing.T, seq *sequence, n int, seed uint64) []int32 {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(r.IntN(seq.d.plan.Manifest.Model.Vocab))
	}
	if _, err := seq.Forward(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

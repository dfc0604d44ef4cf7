package cuda

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
)

// samplePlans are the compiled plans (with GPU samplers) of
// ORC_SAMPLE_PLANS, comma-separated: orcc output, since this package cannot
// compile one. Build them on the GPU host, e.g.
//
//	orcc synth --preset qwen2.5-0.5b --quant q4_k_m -o q.gguf && orcc compile q.gguf -o q.plan --device cuda
func samplePlans(t *testing.T) []string {
	if !gpuTests() || os.Getenv("ORC_SAMPLE_PLANS") == "" {
		t.Skip("set ORC_GPU_TESTS=1 and ORC_SAMPLE_PLANS=plan,... on a GPU host")
	}
	return strings.Split(os.Getenv("ORC_SAMPLE_PLANS"), ",")
}

func openSamplePlan(t *testing.T, dir string) (*Device, *sequence) {
	t.Helper()
	p, err := plans.Open(dir, plans.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Manifest.Kernels.Sampler == nil {
		p.Close()
		t.Fatalf("plan %s has no GPU sampler", dir)
	}
	d, err := Open(p, 0, Options{Ctx: 256})
	if err != nil {
		p.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	seq, err := d.NewSequence(0)
	if err != nil {
		t.Fatal(err)
	}
	return d, seq.(*sequence)
}

// sampleSettings are the settings the GPU tests sample with: greedy and
// draws with every filter, alone and together.
func sampleSettings(r *rand.Rand) []sample.Params {
	ps := []sample.Params{{}, {RepetitionPenalty: 1.3}}
	for _, temp := range []float32{0.3, 0.8, 1.5} {
		for _, topK := range []int{0, 1, 40, 5000} {
			for _, topP := range []float32{0, 0.9} {
				for _, minP := range []float32{0, 0.05} {
					ps = append(ps, sample.Params{Temperature: temp, TopK: topK, TopP: topP, MinP: minP,
						RepetitionPenalty: []float32{1, 1.3}[r.IntN(2)], Seed: r.Uint64()})
				}
			}
		}
	}
	return ps
}

// TestGPUSampleMatchesCPU writes random logits (ties included) where the
// plan's step leaves them and checks that the GPU path returns the token
// the CPU sampler returns for the same logits, settings, seed and recent
// ids, step after step; greedy must never need the logits.
func TestGPUSampleMatchesCPU(t *testing.T) {
	for _, dir := range samplePlans(t) {
		d, seq := openSamplePlan(t, dir)
		vocab := d.plan.Manifest.Model.Vocab
		logitsAt := devptr(seq.c.reg.arena + uint64(d.plan.Manifest.Kernels.Logits))
		r := rand.New(rand.NewPCG(11, 12))
		proven, drawn := 0, 0
		for _, p := range sampleSettings(r) {
			cpu, gpu := sample.New(p), sample.New(p)
			for step := range 6 {
				spread := []float64{0.5, 4, 15}[step%3]
				l := make([]float32, vocab)
				for i := range l {
					v := r.NormFloat64() * spread
					if step%2 == 1 { // ties
						v = math.Round(v*4) / 4
					}
					l[i] = float32(v)
				}
				recent := make([]int32, sample.PenaltyWindow)
				for i := range recent {
					recent[i] = int32(r.IntN(vocab + 2)) // some out of the vocabulary
				}
				if err := d.g.copyHtoD(logitsAt, unsafe.Slice((*byte)(unsafe.Pointer(&l[0])), 4*vocab)); err != nil {
					t.Fatal(err)
				}
				want := cpu.Sample(l, recent)
				got, ok, err := seq.sampleOnGPU(d.sampling, gpu, recent)
				if err != nil {
					t.Fatal(err)
				}
				if p.Temperature == 0 && !ok {
					t.Fatalf("%s %+v: greedy fell back to the host over finite logits", dir, p)
				}
				if p.Temperature > 0 {
					drawn++
					if ok {
						proven++
					}
				}
				if !ok {
					got = gpu.Sample(l, recent)
				}
				if got != want {
					t.Fatalf("%s %+v step %d: GPU path %d (on the GPU: %v), CPU %d", dir, p, step, got, ok, want)
				}
			}
		}
		t.Logf("%s: vocab %d, %d of %d draws proven from the GPU's prefix", dir, vocab, proven, drawn)
		if proven == 0 {
			t.Errorf("%s: no draw was decided on the GPU", dir)
		}
		// A NaN logit: the CPU's rule decides, so the GPU must hand over.
		l := make([]float32, vocab)
		l[vocab/2] = float32(math.NaN())
		if err := d.g.copyHtoD(logitsAt, unsafe.Slice((*byte)(unsafe.Pointer(&l[0])), 4*vocab)); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := seq.sampleOnGPU(d.sampling, sample.New(sample.Params{}), nil); err != nil || ok {
			t.Errorf("%s: NaN logits: proven %v, %v", dir, ok, err)
		}
	}
}

// TestGPUHeadGreedy: after every prefill and decode step of a plan whose LM
// head leaves the greedy pick, that pick decides greedy decoding and is the
// CPU sampler's greedy token over the step's logits.
func TestGPUHeadGreedy(t *testing.T) {
	for _, dir := range samplePlans(t) {
		d, seq := openSamplePlan(t, dir)
		if d.plan.Manifest.Kernels.State.Greedy == 0 {
			t.Fatalf("%s: the plan's head leaves no greedy pick", dir)
		}
		vocab := d.plan.Manifest.Model.Vocab
		r := rand.New(rand.NewPCG(3, 4))
		tokens := make([]int32, 40)
		for i := range tokens {
			tokens[i] = int32(r.IntN(vocab))
		}
		greedy := sample.New(sample.Params{})
		for step := range 17 {
			in := tokens[:1]
			if step == 0 {
				in = tokens[1:] // a prefill
			}
			if err := seq.run(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			got, ok, err := seq.headGreedy(greedy)
			if err != nil || !ok {
				t.Fatalf("%s step %d: the head's pick was not used (%v)", dir, step, err)
			}
			logits, err := seq.hostLogits()
			if err != nil {
				t.Fatal(err)
			}
			if want := greedy.Sample(logits, nil); got != want {
				t.Fatalf("%s step %d: the head picked %d, the CPU sampler %d", dir, step, got, want)
			}
			tokens[0] = got
		}
	}
}

// hostSampled hides a sequence's ForwardSample, so Generate samples on the
// host from the logits.
type hostSampled struct{ runtime.Sequence }

// TestGPUGenerateSampledOnGPU: generation through the plan with sampling on
// the GPU gives the tokens of generation with the logits sampled on the
// host, greedy and drawn.
func TestGPUGenerateSampledOnGPU(t *testing.T) {
	for _, dir := range samplePlans(t) {
		d, first := openSamplePlan(t, dir)
		first.Close()
		vocab := d.plan.Manifest.Model.Vocab
		r := rand.New(rand.NewPCG(5, 6))
		prompt := make([]int32, 20)
		for i := range prompt {
			prompt[i] = int32(r.IntN(vocab))
		}
		for _, p := range []sample.Params{{}, {RepetitionPenalty: 1.2}, {Temperature: 0.7, Seed: 42},
			{Temperature: 1, TopK: 40, TopP: 0.9, MinP: 0.05, RepetitionPenalty: 1.1, Seed: 7}} {
			gp := runtime.GenerateParams{Sampling: p, MaxTokens: 24, PrefillChunk: d.plan.Manifest.Memory.MaxTokens}
			var got [2][]int32
			for i, onGPU := range []bool{true, false} {
				seq, err := d.NewSequence(0)
				if err != nil {
					t.Fatal(err)
				}
				var s runtime.Sequence = seq
				if !onGPU {
					s = hostSampled{seq}
				}
				res, err := runtime.Generate(context.Background(), s, prompt, gp, nil)
				seq.Close()
				if err != nil {
					t.Fatal(err)
				}
				got[i] = res.Tokens
			}
			if !slices.Equal(got[0], got[1]) {
				t.Errorf("%s %+v: sampled on the GPU %v, on the host %v", dir, p, got[0], got[1])
			}
		}
	}
}

// TestGPUSampleCost times sampling one step's logits where they lie against
// copying them back and sampling on the host, over flat (σ 0.5) and peaked
// (σ 15) normal logits. ORC_GPU_BENCH=1; it prints, asserts nothing about
// speed.
func TestGPUSampleCost(t *testing.T) {
	if os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("set ORC_GPU_TESTS=1 ORC_GPU_BENCH=1 and ORC_SAMPLE_PLANS on a GPU host")
	}
	for _, dir := range samplePlans(t) {
		d, seq := openSamplePlan(t, dir)
		vocab := d.plan.Manifest.Model.Vocab
		logitsAt := devptr(seq.c.reg.arena + uint64(d.plan.Manifest.Kernels.Logits))
		r := rand.New(rand.NewPCG(1, 1))
		recent := make([]int32, sample.PenaltyWindow)
		for i := range recent {
			recent[i] = int32(r.IntN(vocab))
		}
		median := func(f func()) float64 {
			var ts []float64
			for range 30 {
				start := time.Now()
				f()
				ts = append(ts, time.Since(start).Seconds()*1e6)
			}
			slices.Sort(ts)
			return ts[len(ts)/2]
		}
		for _, spread := range []float64{0.5, 15} {
			l := make([]float32, vocab)
			for i := range l {
				l[i] = float32(r.NormFloat64() * spread)
			}
			if err := d.g.copyHtoD(logitsAt, unsafe.Slice((*byte)(unsafe.Pointer(&l[0])), 4*vocab)); err != nil {
				t.Fatal(err)
			}
			for _, p := range []sample.Params{{}, {Temperature: 0.7, TopK: 40}, {Temperature: 0.7, TopP: 0.9}, {Temperature: 0.7}} {
				p.RepetitionPenalty = 1.1
				gpu, host := sample.New(p), sample.New(p)
				onGPU := median(func() {
					if _, err := seq.sampleLast(gpu, recent); err != nil {
						t.Fatal(err)
					}
				})
				onHost := median(func() {
					logits, err := seq.hostLogits()
					if err != nil {
						t.Fatal(err)
					}
					host.Sample(logits, recent)
				})
				_, proven, err := seq.sampleOnGPU(d.sampling, sample.New(p), recent)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("σ %4.1f T %.1f top_k %2d top_p %.1f: GPU path %8.1f µs (decided on the GPU: %v), logits back + host %8.1f µs; medians of 30",
					spread, p.Temperature, p.TopK, p.TopP, onGPU, proven, onHost)
			}
		}
	}
}

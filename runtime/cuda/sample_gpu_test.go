package cuda

import (
	"context"
	"encoding/binary"
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
	"github.com/llama-orch/orc/runtime/sample/sampletest"
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
// draws with every filter and penalty, alone and together.
func sampleSettings(r *rand.Rand) []sample.Params {
	ps := []sample.Params{{}, {RepetitionPenalty: 1.3}, {FrequencyPenalty: 0.5, PresencePenalty: 0.5}}
	for _, temp := range []float32{0.3, 0.8, 1.5} {
		for _, topK := range []int{0, 1, 40, 5000} {
			for _, topP := range []float32{0, 0.9} {
				for _, minP := range []float32{0, 0.05} {
					ps = append(ps, sample.Params{Temperature: temp, TopK: topK, TopP: topP, MinP: minP,
						RepetitionPenalty: []float32{1, 1.3}[r.IntN(2)], PresencePenalty: []float32{0, 0.4}[r.IntN(2)], Seed: r.Uint64()})
				}
			}
		}
	}
	return ps
}

// drawOnGPU writes logits where the plan's step leaves them and the draw
// settings of sm for the token at pos after recent into the state block,
// then runs the sampler.
func drawOnGPU(t *testing.T, seq *sequence, logits []float32, sm *sample.Sampler, recent []int32, pos int) int32 {
	t.Helper()
	return drawAfterHead(t, seq, logits, nil, sm, recent, pos)
}

// headPicksOf computes on the host the picks a decode step's LM head
// leaves over logits for a draw with settings st (plans.State.Greedy): the
// greedy key, the largest finite logit's; whether a logit is not finite;
// and for a draw with penalties, the largest key over the finite logits
// no penalty touches. The draw key is the sampler's.
func headPicksOf(logits []float32, st *sample.Step) *stepPicks {
	h := &stepPicks{}
	penalised := map[int32]bool{}
	if st.Temperature != 0 {
		for _, p := range st.Penalised {
			penalised[p.ID] = true
		}
	}
	for i, v := range logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			h.bad = true
			continue
		}
		k := sampleKey(v, i)
		h.greedy = max(h.greedy, k)
		if len(penalised) > 0 && !penalised[int32(i)] {
			h.free = max(h.free, k)
		}
	}
	return h
}

// drawAfterHead is drawOnGPU where head is not nil: the state block then
// holds head's picks and says the step's head left them, as after a decode
// step's LM head, so the sampler may take the largest logit from them.
func drawAfterHead(t *testing.T, seq *sequence, logits []float32, head *stepPicks, sm *sample.Sampler, recent []int32, pos int) int32 {
	t.Helper()
	d := seq.d
	m := &d.plan.Manifest
	if logits != nil {
		if err := d.g.copyHtoD(devptr(seq.c.reg.arena+uint64(m.Kernels.Logits)), unsafe.Slice((*byte)(unsafe.Pointer(&logits[0])), 4*len(logits))); err != nil {
			t.Fatal(err)
		}
	}
	st := sm.Step(recent, pos, m.Model.Vocab)
	writeState(d.state, &m.Kernels.State, []int32{0}, 0, 1, &st, head != nil)
	if head != nil {
		g := d.state[m.Kernels.State.Greedy:]
		binary.LittleEndian.PutUint64(g, head.greedy)
		if head.bad {
			binary.LittleEndian.PutUint32(g[8:], 1)
		}
		binary.LittleEndian.PutUint64(g[24:], head.free)
	}
	if err := d.g.copyHtoD(devptr(seq.c.reg.state), d.state); err != nil {
		t.Fatal(err)
	}
	id, err := seq.sampleOnGPU()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestGPUSampleMatchesCPU writes random logits (ties, close runs of ties,
// NaN and infinities included) where the plan's step leaves them and checks that the GPU's
// sampler draws the token the CPU sampler draws for the same logits,
// settings, seed, position and recent ids: alone, and after the LM head's
// picks (computed here) as a decode step leaves them.
func TestGPUSampleMatchesCPU(t *testing.T) {
	for _, dir := range samplePlans(t) {
		d, seq := openSamplePlan(t, dir)
		vocab := d.plan.Manifest.Model.Vocab
		r := rand.New(rand.NewPCG(11, 12))
		draws := 0
		for _, p := range sampleSettings(r) {
			cpu := sample.New(p)
			for step := range 7 {
				spread := []float64{0.5, 4, 15}[step%3]
				l := make([]float32, vocab)
				for i := range l {
					v := r.NormFloat64() * spread
					switch {
					case step%2 == 1: // ties
						v = math.Round(v*4) / 4
					case step == 6: // runs of ties about 1/16 of a histogram bin apart: a few ids share a sub-bin
						v = math.Round(v*1024) / 1024
					}
					l[i] = float32(v)
				}
				if step == 4 {
					l[r.IntN(vocab)] = float32(math.NaN())
					l[r.IntN(vocab)] = float32(math.Inf(-1))
				}
				if step == 5 {
					l[r.IntN(vocab)], l[r.IntN(vocab)] = float32(math.Inf(1)), float32(math.Inf(1))
				}
				recent := make([]int32, sample.PenaltyWindow)
				for i := range recent {
					recent[i] = int32(r.IntN(vocab + 2)) // some out of the vocabulary
				}
				if step == 2 { // the head's pick penalised: the largest l from its key over the ids no penalty touches
					recent[0] = sample.KeyID(headPicksOf(l, &sample.Step{}).greedy)
				}
				pos := r.IntN(4096)
				want := cpu.Sample(l, recent, pos)
				if got := drawOnGPU(t, seq, l, cpu, recent, pos); got != want {
					t.Fatalf("%s %+v step %d: GPU %d, CPU %d", dir, p, step, got, want)
				}
				st := cpu.Step(recent, pos, vocab)
				if got := drawAfterHead(t, seq, nil, headPicksOf(l, &st), cpu, recent, pos); got != want {
					t.Fatalf("%s %+v step %d, the largest logit from the head's picks: GPU %d, CPU %d", dir, p, step, got, want)
				}
				draws++
			}
		}
		t.Logf("%s: vocab %d, %d draws, each the CPU's", dir, vocab, draws)
	}
}

// TestGPUSampleDistribution: seeded draws (one per position) of the GPU's
// sampler from each of the distribution tests' logit vectors (in the first
// ids; the rest −100) follow the exact distribution (chi-square,
// p ≥ 0.001): 100,000 a case over a vocabulary of at most 4,096, 20,000
// over a larger one; the first 5,000 (200 over a larger one) are also the
// CPU's ids, drawn there from the same logits. Every other draw follows
// the LM head's picks, as a decode step's does.
func TestGPUSampleDistribution(t *testing.T) {
	const n = 32
	for _, dir := range samplePlans(t) {
		d, seq := openSamplePlan(t, dir)
		vocab := d.plan.Manifest.Model.Vocab
		draws, same := 100_000, 5000
		if vocab > 4096 {
			draws, same = 20_000, 200
		}
		settings, recent := sampletest.Settings(n)
		for _, v := range sampletest.Vectors(n) {
			l := make([]float32, vocab)
			for i := range l {
				l[i] = -100
			}
			copy(l, v.Logits)
			for _, p := range settings {
				p.Seed = 777
				sm := sample.New(p)
				st := sm.Step(recent, 0, vocab)
				head := headPicksOf(l, &st)
				f := make([]int, vocab)
				for pos := range draws {
					logits := l
					if pos > 0 {
						logits = nil // already there
					}
					var h *stepPicks
					if pos%2 == 1 {
						h = head
					}
					id := drawAfterHead(t, seq, logits, h, sm, recent, pos)
					f[id]++
					if pos < same {
						if want := sm.Sample(l, recent, pos); id != want {
							t.Fatalf("%s %s %+v position %d: GPU %d, CPU %d", dir, v.Name, p, pos, id, want)
						}
					}
				}
				pv, err := sampletest.ChiSquare(f, sampletest.Expected(l, p, recent))
				if err != nil || pv < 0.001 {
					t.Errorf("%s %s %+v: p-value %.2g, %v", dir, v.Name, p, pv, err)
				}
			}
		}
	}
}

// TestGPUHeadPicks: after every prefill and decode step of a plan whose LM
// head leaves its picks, the greedy pick and the plain draw (temperature
// alone) are the CPU sampler's tokens over the step's logits, and a decode
// step needs no sampler launch for either; for a draw with penalties the
// head's key over the logits no penalty touches is the host's, and the
// sampler drawing after those picks draws the CPU's token.
func TestGPUHeadPicks(t *testing.T) {
	withPicks := 0
	for _, dir := range samplePlans(t) {
		d, seq := openSamplePlan(t, dir)
		if !d.plan.Manifest.Kernels.State.HeadPicks {
			t.Logf("%s: the plan's head leaves no picks (a float-path head)", dir)
			continue
		}
		withPicks++
		vocab := d.plan.Manifest.Model.Vocab
		r := rand.New(rand.NewPCG(3, 4))
		tokens := make([]int32, 40)
		for i := range tokens {
			tokens[i] = int32(r.IntN(vocab))
		}
		for step := range 17 {
			in := tokens[:1]
			if step == 0 {
				in = tokens[1:] // a prefill
			}
			sm := sample.New(sample.Params{})
			var recent []int32
			switch step % 3 {
			case 1:
				sm = sample.New(sample.Params{Temperature: []float32{0.7, 1}[step%2], Seed: uint64(step)})
			case 2:
				sm = sample.New(sample.Params{Temperature: 0.7, TopK: 40, RepetitionPenalty: 1.1, Seed: uint64(step)})
				recent = tokens
			}
			st := sm.Step(recent, seq.pos+len(in), vocab)
			if err := seq.run(context.Background(), in, &st); err != nil {
				t.Fatal(err)
			}
			p, err := seq.picks()
			if err != nil || p.bad {
				t.Fatalf("%s step %d: picks %v, non-finite %v", dir, step, err, p.bad)
			}
			logits, err := seq.hostLogits()
			if err != nil {
				t.Fatal(err)
			}
			if host := headPicksOf(logits, &st); p.free != host.free || (len(st.Penalised) > 0) != (p.free != 0) {
				t.Fatalf("%s step %d (%+v): the head's key over the ids no penalty touches %#x, the host's %#x", dir, step, sm.Params(), p.free, host.free)
			}
			want := sm.Sample(logits, recent, seq.pos)
			got := sample.KeyID(p.greedy)
			switch {
			case st.Plain():
				if step > 0 && p.drawn == 0 {
					t.Fatalf("%s step %d: the head drew nothing", dir, step)
				}
				got = sample.KeyID(p.drawn)
				if step == 0 {
					got = drawOnGPU(t, seq, nil, sm, nil, seq.pos)
				}
			case !st.Greedy():
				got = drawAfterHead(t, seq, nil, &p, sm, recent, seq.pos)
			}
			if got != want {
				t.Fatalf("%s step %d (%+v): the head picked %d, the CPU sampler %d", dir, step, sm.Params(), got, want)
			}
			tokens[0] = got
		}
	}
	if withPicks == 0 {
		t.Fatal("no plan's head leaves picks")
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

// TestGPUSampleCost times the sampler over one step's logits against
// copying them back and sampling on the host, over flat (σ 0.5) and peaked
// (σ 15) normal logits; top_k 65, past the top-k path's bound
// (sample_topk), times the general path's top-k beside it. ORC_GPU_BENCH=1;
// it prints, asserts nothing about speed.
func TestGPUSampleCost(t *testing.T) {
	if os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("set ORC_GPU_TESTS=1 ORC_GPU_BENCH=1 and ORC_SAMPLE_PLANS on a GPU host")
	}
	for _, dir := range samplePlans(t) {
		d, seq := openSamplePlan(t, dir)
		vocab := d.plan.Manifest.Model.Vocab
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
			drawOnGPU(t, seq, l, sample.New(sample.Params{}), nil, 0)
			for _, p := range []sample.Params{{}, {Temperature: 1}, {Temperature: 0.7, TopK: 40}, {Temperature: 0.7, TopK: topkMax + 1}, {Temperature: 0.7, TopP: 0.9},
				{Temperature: 0.7, TopK: 40, TopP: 0.9, MinP: 0.05}, {Temperature: 0.7, TopK: topkMax + 1, TopP: 0.9, MinP: 0.05}} {
				p.RepetitionPenalty = 1.1
				sm := sample.New(p)
				onGPU := median(func() { drawOnGPU(t, seq, nil, sm, recent, 5) })
				kernel := samplerKernelUs(t, seq, 200)
				onHost := median(func() {
					logits, err := seq.hostLogits()
					if err != nil {
						t.Fatal(err)
					}
					sm.Sample(logits, recent, 5)
				})
				t.Logf("σ %4.1f T %.1f top_k %2d top_p %.1f min_p %.2f: sampler %6.1f µs a launch back to back; state copy + sampler + pick back %8.1f µs, logits back + host %8.1f µs; medians of 30",
					spread, p.Temperature, p.TopK, p.TopP, p.MinP, kernel, onGPU, onHost)
			}
		}
	}
}

// samplerKernelUs is the sampler's time a launch, n launches back to back
// over the state block as it stands (GPU events).
func samplerKernelUs(t *testing.T, seq *sequence, n int) float64 {
	t.Helper()
	g := seq.d.g
	start, err := g.eventCreate()
	if err != nil {
		t.Fatal(err)
	}
	defer g.eventDestroy(start)
	end, err := g.eventCreate()
	if err != nil {
		t.Fatal(err)
	}
	defer g.eventDestroy(end)
	b := &batch{launches: []launchRec{seq.d.sampling.rec}, argv: seq.samplerArgs()}
	if err := g.eventRecord(start); err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := g.launch(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.eventRecord(end); err != nil {
		t.Fatal(err)
	}
	if err := g.sync(); err != nil {
		t.Fatal(err)
	}
	ms, err := g.elapsedMs(start, end)
	if err != nil {
		t.Fatal(err)
	}
	return float64(ms) * 1e3 / float64(n)
}

package sample

import (
	"math"
	"slices"
	"testing"
)

// The stream of rng.go for two seeds, computed independently (Python, from
// the algorithm written in rng.go's comment); the GPU sampler checks against
// the same numbers.
func TestRNGStream(t *testing.T) {
	want := map[uint64][]uint64{
		0:  {0x7bbcb40d550682d0, 0xde7fe413d00cc9fd, 0xb3c638353c668c91},
		42: {0x31b0ece7c4f697a2, 0x9008a3b1cb686f03, 0x7c7173abd97be16f},
	}
	for seed, w := range want {
		r := newRNG(seed)
		for i, v := range w {
			if got := r.next(); got != v {
				t.Errorf("seed %d draw %d: %#x, want %#x", seed, i, got, v)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	good := []Params{{}, {Temperature: 2, TopK: 40, TopP: 0.95, MinP: 0.05, RepetitionPenalty: 1.1, Seed: 7}}
	for _, p := range good {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	nan := float32(math.NaN())
	bad := []Params{{Temperature: -0.1}, {Temperature: 2.5}, {Temperature: nan}, {TopK: -1}, {TopP: 1.5},
		{TopP: nan}, {MinP: -0.1}, {RepetitionPenalty: -1}, {RepetitionPenalty: nan}, {RepetitionPenalty: float32(math.Inf(1))}}
	for _, p := range bad {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
}

func TestGreedy(t *testing.T) {
	s := New(Params{})
	if got := s.Sample([]float32{1, 3, -2, 3, 0}, nil); got != 1 {
		t.Errorf("greedy with a tie: %d, want the lower id 1", got)
	}
	logits := []float32{1, 3, 2}
	s.Sample(logits, []int32{1})
	if logits[1] != 3 {
		t.Error("Sample modified the caller's logits")
	}
	if got := s.Sample(nil, nil); got != -1 {
		t.Errorf("empty logits: %d, want -1", got)
	}
}

func TestRepetitionPenalty(t *testing.T) {
	// Positive logits are divided, negative ones multiplied; a repeated id
	// is penalised once; out-of-range ids are ignored.
	s := New(Params{RepetitionPenalty: 2})
	l := []float32{3, 2.5, -1, -1.2}
	if got := s.Sample(l, []int32{0, 0, 0, 9, -3}); got != 1 {
		t.Errorf("penalised 3→1.5 should lose to 2.5: got %d", got)
	}
	if got := s.Sample(l, []int32{0, 1, 2}); got != 0 {
		t.Errorf("got %d, want 0 (1.5 > 1.25)", got)
	}
	s.Sample(l, []int32{0, 1, 2})
	if s.logits[2] != -2 || s.logits[3] != -1.2 {
		t.Errorf("negative logit: %v, want [.. -2 -1.2]", s.logits)
	}
}

// freq draws n tokens and returns how often each id came.
func freq(p Params, logits []float32, n int) []int {
	s := New(p)
	f := make([]int, len(logits))
	for range n {
		f[s.Sample(logits, nil)]++
	}
	return f
}

func TestDistribution(t *testing.T) {
	// At temperature 1 with no filter the frequencies follow the softmax;
	// 20000 draws put each within a few standard errors (≤ 0.0035).
	logits := []float32{0, 1, 2, -1}
	const n = 20000
	f := freq(Params{Temperature: 1, Seed: 3}, logits, n)
	sum := 0.0
	for _, l := range logits {
		sum += math.Exp(float64(l))
	}
	for i, l := range logits {
		p := math.Exp(float64(l)) / sum
		if got := float64(f[i]) / n; math.Abs(got-p) > 0.015 {
			t.Errorf("id %d: frequency %.4f, softmax %.4f", i, got, p)
		}
	}
	// Temperature 2 flattens: p(2)/p(0) = e^(2/2).
	f = freq(Params{Temperature: 2, Seed: 3}, logits, n)
	if r := float64(f[2]) / float64(f[0]); math.Abs(r-math.E) > 0.25 {
		t.Errorf("temperature 2: ratio %.3f, want e", r)
	}
}

func TestTopK(t *testing.T) {
	logits := []float32{0.5, 3, 1, 2.9, -1, 2.9, 0}
	f := freq(Params{Temperature: 2, TopK: 3, Seed: 1}, logits, 3000)
	for i, n := range f {
		kept := i == 1 || i == 3 || i == 5 // ties at 2.9 both kept
		if kept != (n > 0) {
			t.Errorf("top-3: id %d drawn %d times", i, n)
		}
	}
	f = freq(Params{Temperature: 2, TopK: 2, Seed: 1}, logits, 3000)
	if f[5] != 0 || f[3] == 0 {
		t.Errorf("top-2 tie must keep the lower id 3, not 5: %v", f)
	}
	f = freq(Params{Temperature: 1, TopK: 1, Seed: 1}, logits, 100)
	if f[1] != 100 {
		t.Errorf("top-1 is greedy: %v", f)
	}
}

func TestTopP(t *testing.T) {
	// Probabilities 0.5, 0.3, 0.15, 0.05 (log-weights); top-p 0.75 needs the
	// first two (0.8 ≥ 0.75), 0.85 the first three.
	logits := []float32{float32(math.Log(0.5)), float32(math.Log(0.05)), float32(math.Log(0.3)), float32(math.Log(0.15))}
	f := freq(Params{Temperature: 1, TopP: 0.75, Seed: 9}, logits, 4000)
	if f[0] == 0 || f[2] == 0 || f[1] != 0 || f[3] != 0 {
		t.Errorf("top-p 0.75: %v", f)
	}
	if r := float64(f[0]) / float64(f[0]+f[2]); math.Abs(r-0.625) > 0.04 {
		t.Errorf("top-p renormalises: share %.3f, want 0.625", r)
	}
	f = freq(Params{Temperature: 1, TopP: 0.85, Seed: 9}, logits, 4000)
	if f[3] == 0 || f[1] != 0 {
		t.Errorf("top-p 0.85: %v", f)
	}
	f = freq(Params{Temperature: 1, TopP: 0.01, Seed: 9}, logits, 100)
	if f[0] != 100 {
		t.Errorf("tiny top-p keeps the best: %v", f)
	}
}

func TestMinP(t *testing.T) {
	// Relative to the best (0.5): 0.3 → 0.6, 0.15 → 0.3, 0.05 → 0.1.
	logits := []float32{float32(math.Log(0.5)), float32(math.Log(0.05)), float32(math.Log(0.3)), float32(math.Log(0.15))}
	f := freq(Params{Temperature: 1, MinP: 0.25, Seed: 5}, logits, 4000)
	if f[0] == 0 || f[2] == 0 || f[3] == 0 || f[1] != 0 {
		t.Errorf("min-p 0.25: %v", f)
	}
	f = freq(Params{Temperature: 1, MinP: 0.5, Seed: 5}, logits, 4000)
	if f[3] != 0 || f[2] == 0 {
		t.Errorf("min-p 0.5: %v", f)
	}
	// With top-k the same bound applies after ordering.
	f = freq(Params{Temperature: 1, TopK: 3, MinP: 0.5, Seed: 5}, logits, 4000)
	if f[3] != 0 || f[1] != 0 || f[2] == 0 {
		t.Errorf("top-k 3 + min-p 0.5: %v", f)
	}
}

func TestDeterminism(t *testing.T) {
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(math.Sin(float64(i)*0.37)) * 3
	}
	p := Params{Temperature: 0.9, TopK: 50, TopP: 0.9, MinP: 0.02, RepetitionPenalty: 1.1, Seed: 1234}
	run := func(p Params) []int32 {
		s := New(p)
		var out []int32
		for range 64 {
			out = append(out, s.Sample(logits, out))
		}
		return out
	}
	a, b := run(p), run(p)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed differs at %d: %v vs %v", i, a, b)
		}
	}
	p.Seed++
	c := run(p)
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same == len(a) {
		t.Errorf("seeds %d and %d gave the same 64 tokens", p.Seed-1, p.Seed)
	}
}

// specSample is the package comment's algorithm written plainly: the whole
// vocabulary sorted, every filter applied in turn. The sampler, which sorts
// only a prefix, must pick the same token for the same draw.
func specSample(p Params, logits []float32, recent []int32, r *rng) int32 {
	l := append([]float32(nil), logits...)
	New(p).penalise(l, recent)
	if p.Temperature == 0 {
		return argmax(l)
	}
	var c []candidate
	for i, v := range l {
		c = append(c, candidate{id: int32(i), logit: v / p.Temperature})
	}
	slices.SortFunc(c, compareSorted)
	if p.TopK > 0 && p.TopK < len(c) {
		c = c[:p.TopK]
	}
	idOrderSum := func(c []candidate) float64 {
		byID := slices.Clone(c)
		slices.SortFunc(byID, func(a, b candidate) int { return int(a.id - b.id) })
		t := 0.0
		for _, x := range byID {
			t += x.w
		}
		return t
	}
	for i := range c {
		c[i].w = math.Exp(float64(c[i].logit) - float64(c[0].logit))
	}
	if p.TopP > 0 && p.TopP < 1 {
		target, run := float64(p.TopP)*idOrderSum(c), 0.0
		for i, x := range c {
			if run += x.w; run >= target {
				c = c[:i+1]
				break
			}
		}
	}
	if p.MinP > 0 {
		for i, x := range c {
			if x.w < float64(p.MinP) {
				c = c[:i]
				break
			}
		}
	}
	target, run := r.float64()*idOrderSum(c), 0.0
	for _, x := range c {
		if run += x.w; run > target {
			return x.id
		}
	}
	return c[len(c)-1].id
}

func TestMatchesSpec(t *testing.T) {
	vocab := 3000
	logits := make([]float32, vocab)
	params := []Params{
		{Temperature: 1}, {Temperature: 0.3}, {Temperature: 2, TopK: 50}, {Temperature: 1, TopP: 0.9},
		{Temperature: 0.7, TopP: 0.5, MinP: 0.05}, {Temperature: 1.5, MinP: 0.2}, {Temperature: 1, TopK: 7, TopP: 0.8},
		{Temperature: 1, TopK: 200, MinP: 0.01, RepetitionPenalty: 1.3}, {Temperature: 1, TopP: 0.999},
		{Temperature: 1, TopP: 0.95, MinP: 0.3}, {Temperature: 2, TopK: 100, TopP: 0.9, MinP: 0.5},
	}
	for trial := range 6 {
		// Sharp and flat logit shapes, with ties.
		for i := range logits {
			logits[i] = float32(math.Round(math.Sin(float64(i*(trial+3))*0.37)*float64(4*trial+1)*4) / 4)
		}
		recent := []int32{int32(trial), 17, 17, int32(vocab - 1)}
		for _, p := range params {
			p.Seed = uint64(trial)
			s, r := New(p), newRNG(p.Seed)
			for draw := range 20 {
				want := specSample(p, logits, recent, &r)
				if got := s.Sample(logits, recent); got != want {
					t.Fatalf("trial %d %+v draw %d: %d, spec %d", trial, p, draw, got, want)
				}
			}
		}
	}
}

package sample

import (
	"math"
	"slices"
	"testing"
)

// The constants are the float32 values of what they name (the CUDA
// template spells the same bit patterns).
func TestConstants(t *testing.T) {
	want := map[string][2]float32{
		"ln2": {ln2, float32(math.Ln2)}, "log2e": {log2e, float32(1 / math.Ln2)}, "sqrt2": {sqrt2, float32(math.Sqrt2)},
		"1/3": {lnC[0], float32(1.0 / 3)}, "1/5": {lnC[1], float32(1.0 / 5)}, "1/7": {lnC[2], float32(1.0 / 7)},
		"1/9": {lnC[3], float32(1.0 / 9)}, "1/6": {expC[1], float32(1.0 / 6)}, "1/24": {expC[2], float32(1.0 / 24)},
		"1/120": {expC[3], float32(1.0 / 120)}, "1/720": {expC[4], float32(1.0 / 720)}, "1/5040": {expC[5], float32(1.0 / 5040)},
	}
	for name, v := range want {
		if v[0] != v[1] {
			t.Errorf("%s: %v, want %v", name, v[0], v[1])
		}
	}
	if float64(ln2hi)+float64(ln2lo)-math.Ln2 > 1e-12 || math.Float32bits(ln2hi)&0xFF != 0 {
		t.Errorf("ln2hi %v + ln2lo %v", ln2hi, ln2lo)
	}
}

// ln32 and exp32 agree with math.Log and math.Exp to a few float32 ulp
// over the ranges the sampler uses.
func TestDetMath(t *testing.T) {
	ulps := func(got float32, want float64) float64 {
		return math.Abs(float64(got)-want) / math.Abs(float64(math.Nextafter32(float32(want), float32(math.Inf(1)))-float32(want)))
	}
	for x := float32(0x1p-24); x < 20; x *= 1.0137 {
		if u := ulps(ln32(x), math.Log(float64(x))); u > 4 && math.Abs(math.Log(float64(x))) > 1e-3 {
			t.Fatalf("ln32(%v) = %v, off by %.1f ulp", x, ln32(x), u)
		}
	}
	for d := float32(0); d > -87; d -= 0.0731 {
		if u := ulps(exp32(d), math.Exp(float64(d))); u > 4 {
			t.Fatalf("exp32(%v) = %v, off by %.1f ulp", d, exp32(d), u)
		}
	}
	if exp32(0) != 1 || exp32(-88) != 0 || exp32(float32(math.Inf(-1))) != 0 {
		t.Error("exp32's ends")
	}
}

func TestValidate(t *testing.T) {
	good := []Params{{}, {Temperature: 2, TopK: 40, TopP: 0.95, MinP: 0.05, RepetitionPenalty: 1.1, FrequencyPenalty: -2, PresencePenalty: 2, Seed: 7}}
	for _, p := range good {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	nan := float32(math.NaN())
	bad := []Params{{Temperature: -0.1}, {Temperature: 2.5}, {Temperature: nan}, {TopK: -1}, {TopP: 1.5},
		{TopP: nan}, {MinP: -0.1}, {RepetitionPenalty: -1}, {RepetitionPenalty: nan}, {RepetitionPenalty: float32(math.Inf(1))},
		{FrequencyPenalty: 2.5}, {PresencePenalty: -3}, {FrequencyPenalty: nan}}
	for _, p := range bad {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
}

func TestGreedy(t *testing.T) {
	s := New(Params{})
	if got := s.Sample([]float32{1, 3, -2, 3, 0}, nil, 0); got != 1 {
		t.Errorf("greedy with a tie: %d, want the lower id 1", got)
	}
	nan := float32(math.NaN())
	if got := s.Sample([]float32{nan, -1, nan, 2, float32(math.Inf(1))}, nil, 0); got != 4 {
		t.Errorf("greedy over NaN and +Inf: %d, want 4", got)
	}
	if got := s.Sample([]float32{nan, nan}, nil, 0); got != 0 {
		t.Errorf("greedy over NaN alone: %d, want 0", got)
	}
	logits := []float32{1, 3, 2}
	New(Params{RepetitionPenalty: 2}).Sample(logits, []int32{1}, 0)
	if logits[1] != 3 {
		t.Error("Sample modified the caller's logits")
	}
	if got := s.Sample(nil, nil, 0); got != -1 {
		t.Errorf("empty logits: %d, want -1", got)
	}
}

func TestPenalties(t *testing.T) {
	// Positive logits are divided, negative ones multiplied; a repeated id
	// is penalised once; out-of-range ids are ignored.
	s := New(Params{RepetitionPenalty: 2})
	l := []float32{3, 2.5, -1, -1.2}
	if got := s.Sample(l, []int32{0, 0, 0, 9, -3}, 0); got != 1 {
		t.Errorf("penalised 3→1.5 should lose to 2.5: got %d", got)
	}
	if got := s.Sample(l, []int32{0, 1, 2}, 0); got != 0 {
		t.Errorf("got %d, want 0 (1.5 > 1.25)", got)
	}
	st := s.Step([]int32{0, 1, 2}, 0, 4)
	if v := st.penalise(-1, 1); v != -2 {
		t.Errorf("negative logit penalised to %v, want -2", v)
	}
	// Frequency counts occurrences in the window, presence once.
	s = New(Params{FrequencyPenalty: 0.5, PresencePenalty: 0.25})
	st = s.Step([]int32{2, 2, 2, 1, 7, -1}, 0, 4)
	if want := []Penalised{{1, 1}, {2, 3}}; !slices.Equal(st.Penalised, want) {
		t.Fatalf("window %v, want %v", st.Penalised, want)
	}
	if v := st.penalise(3, 3); v != 3-1.5-0.25 {
		t.Errorf("frequency and presence: %v", v)
	}
	// Only the last PenaltyWindow ids count.
	recent := make([]int32, PenaltyWindow+1)
	recent[0] = 3
	if st := New(Params{RepetitionPenalty: 1.5}).Step(recent, 0, 4); len(st.Penalised) != 1 || st.Penalised[0] != (Penalised{0, PenaltyWindow}) {
		t.Errorf("window of %d: %v", PenaltyWindow, st.Penalised)
	}
	if st := New(Params{RepetitionPenalty: 1}).Step(recent, 0, 4); st.Penalised != nil || !st.Greedy() {
		t.Errorf("penalty 1 is off: %+v", st)
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
		for pos := range 64 {
			out = append(out, s.Sample(logits, out, pos))
		}
		return out
	}
	a, b := run(p), run(p)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed differs: %v vs %v", a, b)
	}
	p.Seed++
	if c := run(p); slices.Equal(a, c) {
		t.Errorf("seeds %d and %d gave the same 64 tokens", p.Seed-1, p.Seed)
	}
	if StepKey(1, 0) == StepKey(1, 1) || StepKey(1, 0) == StepKey(2, 0) {
		t.Error("step keys repeat")
	}
}

// specSample is the package comment's algorithm written plainly: the whole
// vocabulary sorted, every filter applied in turn, the largest z kept.
func specSample(p Params, logits []float32, recent []int32, pos int) int32 {
	s := New(p)
	st := s.Step(recent, pos, len(logits))
	l := slices.Clone(logits)
	for _, x := range st.Penalised {
		l[x.ID] = st.penalise(l[x.ID], x.Count)
	}
	if p.Temperature == 0 {
		best := 0
		for i, v := range l {
			if notNaN(v) > notNaN(l[best]) {
				best = i
			}
		}
		return int32(best)
	}
	ids := make([]int32, len(l))
	for i := range l {
		l[i] = notNaN(l[i] / p.Temperature)
		ids[i] = int32(i)
	}
	slices.SortStableFunc(ids, func(a, b int32) int {
		switch {
		case l[a] > l[b]:
			return -1
		case l[a] < l[b]:
			return 1
		}
		return 0
	})
	m := l[ids[0]]
	if st.TopK > 0 {
		ids = ids[:st.TopK]
	}
	if st.TopP > 0 {
		var w, run uint64
		for _, id := range ids {
			w += mass(exp32(weightArg(l[id], m)))
		}
		for i, id := range ids {
			if run += mass(exp32(weightArg(l[id], m))); float64(run) >= float64(st.TopP)*float64(w) {
				ids = ids[:i+1]
				break
			}
		}
	}
	best, bestZ := int32(-1), float32(0)
	for _, id := range ids {
		if exp32(weightArg(l[id], m)) < p.MinP {
			continue
		}
		z := noisy(l[id], m, st.Key, id)
		if best < 0 || z > bestZ || (z == bestZ && id < best) {
			best, bestZ = id, z
		}
	}
	return best
}

func TestMatchesSpec(t *testing.T) {
	vocab := 3000
	logits := make([]float32, vocab)
	params := []Params{
		{Temperature: 1}, {Temperature: 0.3}, {Temperature: 2, TopK: 50}, {Temperature: 1, TopP: 0.9},
		{Temperature: 0.7, TopP: 0.5, MinP: 0.05}, {Temperature: 1.5, MinP: 0.2}, {Temperature: 1, TopK: 7, TopP: 0.8},
		{Temperature: 1, TopK: 200, MinP: 0.01, RepetitionPenalty: 1.3}, {Temperature: 1, TopP: 0.999},
		{Temperature: 1, TopP: 0.95, MinP: 0.3}, {Temperature: 2, TopK: 100, TopP: 0.9, MinP: 0.5},
		{RepetitionPenalty: 1.5, FrequencyPenalty: 1}, {Temperature: 0.8, PresencePenalty: 2},
	}
	for trial := range 6 {
		// Sharp and flat logit shapes, with ties.
		for i := range logits {
			logits[i] = float32(math.Round(math.Sin(float64(i*(trial+3))*0.37)*float64(4*trial+1)*4) / 4)
		}
		recent := []int32{int32(trial), 17, 17, int32(vocab - 1)}
		for _, p := range params {
			p.Seed = uint64(trial)
			s := New(p)
			for pos := range 20 {
				want := specSample(p, logits, recent, pos)
				if got := s.Sample(logits, recent, pos); got != want {
					t.Fatalf("trial %d %+v position %d: %d, spec %d", trial, p, pos, got, want)
				}
			}
		}
	}
}

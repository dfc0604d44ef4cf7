package batching

import (
	"slices"
	"testing"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
)

// stepUntil steps s until done says so.
func stepUntil(t *testing.T, s *Scheduler, done func() bool) {
	t.Helper()
	for range 10000 {
		if done() {
			return
		}
		s.Step()
	}
	t.Fatal("the condition never came")
}

// A request arriving while another decodes alone takes it into the batch
// (its positions since its last full block copied to its blocks); when the
// newcomer ends, the first runs alone again, taking from the pool only the
// positions the batch computed. Each gives exactly its tokens alone.
func TestJoiningRequestTakesTheLoneOneIntoTheBatch(t *testing.T) {
	dev := openStories(t)
	vocab := dev.Info().Vocab
	first := mixedJobs(6, vocab, 1)[5] // 16 prompt tokens
	first.params = runtime.GenerateParams{MaxTokens: 30}
	second := &job{prompt: []int32{7, 300, 41, 9, 88}, params: runtime.GenerateParams{MaxTokens: 5,
		Sampling: sample.Params{Temperature: 0.8, TopK: 20, Seed: 9}}}
	alone := eachAlone(t, dev, []*job{first, second})

	sd := &countingDevice{Device: dev}
	s, err := New(sd, Config{Slots: 4, PrefillChunk: 8, BlockTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := sd.b
	if err := s.Admit(first.request()); err != nil {
		t.Fatal(err)
	}
	// Alone: two prompt chunks of 8, then 6 decode steps: 22 positions,
	// blocks of 4 stored through 20.
	stepUntil(t, s, func() bool { return len(first.got) == 7 })
	if b.batched() != 0 || b.seq.steps != 8 {
		t.Fatalf("alone: %d batched steps, %d solo steps; want 0 and 8", b.batched(), b.seq.steps)
	}
	if want := [][2]int{{0, 0}}; !slices.Equal(b.loads, want) {
		t.Errorf("alone: loads %v, want %v", b.loads, want)
	}
	if want := [][2]int{{0, 8}, {8, 16}, {16, 20}}; !slices.Equal(b.stores, want) {
		t.Errorf("alone: stores %v, want %v", b.stores, want)
	}
	if err := s.Admit(second.request()); err != nil {
		t.Fatal(err)
	}
	s.Step()
	if want := [2]int{20, 22}; b.batched() != 1 || b.stores[len(b.stores)-1] != want {
		t.Errorf("joined: %d batched steps, last store %v; want 1 and %v", b.batched(), b.stores[len(b.stores)-1], want)
	}
	stepUntil(t, s, func() bool { return second.res != nil })
	batched, at := b.batched(), len(first.got)
	stepUntil(t, s, func() bool { return first.res != nil })
	if b.batched() != batched {
		t.Errorf("%d batched steps after the newcomer ended, want none", b.batched()-batched)
	}
	// The solo cache held 22 positions; the batch computed the rest.
	if want := [2]int{22, 16 + at - 1}; b.loads[len(b.loads)-1] != want {
		t.Errorf("alone again: loaded %v, want %v", b.loads[len(b.loads)-1], want)
	}
	for i, j := range []*job{first, second} {
		if j.err != nil || !slices.Equal(j.res.Tokens, alone[i]) {
			t.Errorf("job %d: %v (error %v) across the hand-overs, %v alone", i, j.res.Tokens, j.err, alone[i])
		}
	}
	if st := s.Stats(); st.KV.Used != 0 {
		t.Errorf("%d blocks held after both ended", st.KV.Used)
	}
}

// When all but one of the running sequences end, the survivor continues
// alone, its whole cache loaded from its blocks, and gives exactly its
// tokens alone.
func TestSurvivorContinuesAlone(t *testing.T) {
	dev := openTinyQwen(t)
	jobs := mixedJobs(4, dev.Info().Vocab, 4)
	jobs[3].params.MaxTokens = 12 // samples; outlives the others
	alone := eachAlone(t, dev, jobs)
	sd := &countingDevice{Device: dev}
	s, err := New(sd, Config{Slots: 4, PrefillChunk: 8, BlockTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, j := range jobs {
		if err := s.Admit(j.request()); err != nil {
			t.Fatal(err)
		}
	}
	stepUntil(t, s, func() bool { return s.Running() == 1 })
	survivor := jobs[3]
	fed := len(survivor.prompt) + len(survivor.got) - 1
	if b := sd.b; b.seq.steps != 0 || len(b.loads) != 0 {
		t.Fatalf("together: %d solo steps, loads %v", b.seq.steps, b.loads)
	}
	stepUntil(t, s, func() bool { return s.Running() == 0 })
	if b := sd.b; b.seq.steps == 0 || len(b.loads) != 1 || b.loads[0] != [2]int{0, fed} {
		t.Errorf("the survivor alone: %d solo steps, loads %v; want one load of [0, %d)", b.seq.steps, b.loads, fed)
	}
	for i, j := range jobs {
		if !slices.Equal(j.res.Tokens, alone[i]) {
			t.Errorf("job %d: %v, %v alone", i, j.res.Tokens, alone[i])
		}
	}
}

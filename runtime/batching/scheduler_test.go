package batching

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/cpu"
	"github.com/llama-orch/orc/runtime/kvcache"
	"github.com/llama-orch/orc/runtime/sample"
)

// openModel compiles a GGUF for the CPU device (steps of at most 64
// tokens) and opens it.
func openModel(t *testing.T, gguf string) *cpu.Device {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plan")
	if err := compiler.Compile(compiler.Options{Model: gguf, Out: dir, Target: "cpu", MaxTokens: 64}); err != nil {
		t.Fatal(err)
	}
	p, err := plans.Open(dir, plans.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := cpu.Open(p, cpu.Options{Ctx: 256})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dev
}

func openStories(t *testing.T) *cpu.Device {
	return openModel(t, filepath.Join("..", "..", "..", "shared", "testdata", "models", "stories260k-f32.gguf"))
}

// openTinyQwen is the qwen2.5-0.5b-tiny preset in its Q4_K_M mix.
func openTinyQwen(t *testing.T) *cpu.Device {
	t.Helper()
	p, err := synth.Lookup("qwen2.5-0.5b-tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := synth.Plan(p, p.DefaultQuant)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "qwen.gguf")
	if err := m.WriteFile(path, 1); err != nil {
		t.Fatal(err)
	}
	return openModel(t, path)
}

func newScheduler(t *testing.T, dev *cpu.Device, cfg Config) *Scheduler {
	t.Helper()
	s, err := New(dev, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// job is a request and what came of it.
type job struct {
	prompt []int32
	params runtime.GenerateParams
	ctx    context.Context
	got    []int32
	res    *runtime.GenerateResult
	err    error
}

func (j *job) request() *Request {
	if j.ctx == nil {
		j.ctx = context.Background()
	}
	j.got, j.res, j.err = nil, nil, nil
	return &Request{Ctx: j.ctx, Prompt: j.prompt, Params: j.params,
		OnToken: func(id int32) bool { j.got = append(j.got, id); return true },
		Done:    func(res runtime.GenerateResult, err error) { j.res, j.err = &res, err },
	}
}

// runAll admits the jobs in order as slots and blocks allow (between
// steps) and steps until every one has ended.
func runAll(t *testing.T, s *Scheduler, jobs []*job) {
	t.Helper()
	waiting := slices.Clone(jobs)
	for steps := 0; len(waiting) > 0 || s.Running() > 0; steps++ {
		for len(waiting) > 0 {
			err := s.Admit(waiting[0].request())
			if errors.Is(err, ErrNoSlot) || errors.Is(err, kvcache.ErrNoBlocks) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			waiting = waiting[1:]
		}
		s.Step()
		if steps > 100000 {
			t.Fatal("the jobs never ended")
		}
	}
	for i, j := range jobs {
		if j.res == nil || j.err != nil {
			t.Fatalf("job %d: result %v, error %v", i, j.res, j.err)
		}
		if !slices.Equal(j.got, j.res.Tokens) {
			t.Fatalf("job %d: onToken saw %v, the result says %v", i, j.got, j.res.Tokens)
		}
	}
}

// eachAlone runs each job alone on a scheduler of its own (no prefix
// cached by another) and returns their tokens.
func eachAlone(t *testing.T, dev *cpu.Device, jobs []*job) [][]int32 {
	t.Helper()
	alone := make([][]int32, len(jobs))
	for i, j := range jobs {
		one := newScheduler(t, dev, Config{Slots: 1, PrefillChunk: 64})
		runAll(t, one, []*job{j})
		one.Close()
		alone[i] = j.res.Tokens
	}
	return alone
}

// mixedJobs are n requests with prompts of 1 to 3n−2 tokens; every
// fourth samples (its own seed, temperature, top-p, penalty), the rest are
// greedy.
func mixedJobs(n, vocab, maxTokens int) []*job {
	jobs := make([]*job, n)
	for i := range jobs {
		prompt := make([]int32, 1+3*i)
		for k := range prompt {
			prompt[k] = int32(1 + (7919*k+104729*i)%(vocab-1))
		}
		p := runtime.GenerateParams{MaxTokens: maxTokens}
		if i%4 == 3 {
			p.Sampling = sample.Params{Temperature: 0.9, TopP: 0.9, RepetitionPenalty: 1.1, Seed: uint64(i)}
		}
		jobs[i] = &job{prompt: prompt, params: p}
	}
	return jobs
}

// Sixteen concurrent requests of different prompt lengths, prefilled in
// chunks of 8 beside the others' decode steps, give exactly the tokens
// each gives alone; on stories260k also exactly the sequential worker's
// (runtime.Generate over a Sequence).
func TestConcurrentRequestsGiveTheirTokensAlone(t *testing.T) {
	for _, m := range []struct {
		name string
		open func(*testing.T) *cpu.Device
		max  int
	}{{"stories", openStories, 24}, {"qwen-tiny-q4_k_m", openTinyQwen, 6}} {
		t.Run(m.name, func(t *testing.T) {
			dev := m.open(t)
			vocab := dev.Info().Vocab
			jobs := mixedJobs(16, vocab, m.max)
			alone := eachAlone(t, dev, jobs)
			s := newScheduler(t, dev, Config{Slots: 16, PrefillChunk: 8})
			runAll(t, s, jobs)
			for i, j := range jobs {
				if !slices.Equal(j.res.Tokens, alone[i]) {
					t.Errorf("job %d (prompt %d tokens): %v batched, %v alone", i, len(j.prompt), j.res.Tokens, alone[i])
				}
			}
			if st := s.Stats(); st.KV.Used != 0 || st.Running != 0 {
				t.Errorf("after the run: %+v", st)
			}
			if m.name != "stories" {
				return
			}
			for i, j := range jobs {
				seq, err := dev.NewSequence(dev.Info().ContextLength)
				if err != nil {
					t.Fatal(err)
				}
				p := j.params
				p.PrefillChunk = dev.Info().MaxTokens
				res, err := runtime.Generate(context.Background(), seq, j.prompt, p, nil)
				seq.Close()
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(res.Tokens, alone[i]) {
					t.Errorf("job %d: %v batched, %v from the sequential loop", i, alone[i], res.Tokens)
				}
			}
		})
	}
}

// A request whose prompt starts with blocks an earlier one left in the
// cache prefills only the rest and gives exactly the cold run's tokens.
func TestPrefixReuseGivesTheColdTokens(t *testing.T) {
	dev := openStories(t)
	vocab := dev.Info().Vocab
	shared := mixedJobs(14, vocab, 1)[13].prompt // 40 tokens
	prompts := [][]int32{
		append(slices.Clone(shared), 5, 6, 7),
		append(slices.Clone(shared), 9),
		slices.Clone(shared[:37]),
		append(slices.Clone(shared), 5, 6, 7), // the first again, whole
	}
	jobs := make([]*job, len(prompts))
	for i, p := range prompts {
		jobs[i] = &job{prompt: p, params: runtime.GenerateParams{MaxTokens: 16}}
	}
	cold := eachAlone(t, dev, jobs)
	s := newScheduler(t, dev, Config{Slots: 4, PrefillChunk: 64, BlockTokens: 8})
	// Positions from the cache: none, then the 40 shared ones (5 blocks),
	// 32 (a 37-token prompt leaves its last block to compute), and 40
	// again (a prompt of 43 takes at most 5 whole blocks).
	wantHits := []uint64{0, 40, 32, 40}
	var hits uint64
	for i, j := range jobs {
		runAll(t, s, []*job{j})
		st := s.Stats()
		if !slices.Equal(j.res.Tokens, cold[i]) {
			t.Errorf("prompt %d: %v with the cache, %v cold", i, j.res.Tokens, cold[i])
		}
		if got := st.KV.Hits - hits; got != wantHits[i] {
			t.Errorf("prompt %d: %d positions from the cache, want %d", i, got, wantHits[i])
		}
		hits = st.KV.Hits
		if st.KV.Used != 0 {
			t.Errorf("prompt %d: %d blocks still held after it ended", i, st.KV.Used)
		}
	}
	if st := s.Stats(); st.KV.Queries != uint64(43+41+37+43) {
		t.Errorf("%d prompt tokens queried, want %d", st.KV.Queries, 43+41+37+43)
	}
}

// Requests cancelled before admission's first step, mid-prompt and
// mid-generation, or stopped by their onToken, end as such, and every KV
// block is free again after them; the others give their tokens alone.
func TestCancelledRequestsGiveTheirBlocksBack(t *testing.T) {
	dev := openStories(t)
	jobs := mixedJobs(12, dev.Info().Vocab, 20)
	want := eachAlone(t, dev, jobs)
	s := newScheduler(t, dev, Config{Slots: 5, PrefillChunk: 4, BlockTokens: 4})
	before := s.Stats().KV
	cancels := map[int]int{1: 0, 4: 3, 7: 10} // job → cancel after this many tokens
	stops := map[int]int{9: 5}                // job → its onToken says stop at this token
	for i, j := range jobs {
		ctx, cancel := context.WithCancel(context.Background())
		j.ctx = ctx
		if i == 1 {
			cancel()
		}
		after, cancels := cancels[i]
		stopAt, stops := stops[i]
		r := j.request()
		r.OnToken = func(id int32) bool {
			j.got = append(j.got, id)
			if cancels && len(j.got) == after {
				cancel()
			}
			return !stops || len(j.got) < stopAt
		}
		if err := admitWhenFree(t, s, r); err != nil {
			t.Fatal(err)
		}
	}
	for s.Running() > 0 {
		s.Step()
	}
	for i, j := range jobs {
		reason := j.res.StopReason
		switch _, stopped := stops[i]; {
		case i == 1 && (reason != runtime.StopCancelled || len(j.res.Tokens) != 0):
			t.Errorf("job %d cancelled before its first step: %s after %d tokens", i, reason, len(j.res.Tokens))
		case i == 4 || i == 7:
			if reason != runtime.StopCancelled || len(j.res.Tokens) != cancels[i] {
				t.Errorf("job %d: %s after %d tokens; want cancelled after %d", i, reason, len(j.res.Tokens), cancels[i])
			}
		case stopped:
			if reason != runtime.StopStopped || len(j.res.Tokens) != stops[i] {
				t.Errorf("job %d: %s after %d tokens; want stopped after %d", i, reason, len(j.res.Tokens), stops[i])
			}
		case i != 1 && !slices.Equal(j.res.Tokens, want[i]):
			t.Errorf("job %d: %v beside cancelled ones, %v alone", i, j.res.Tokens, want[i])
		}
		if i != 1 && !slices.Equal(j.res.Tokens, want[i][:len(j.res.Tokens)]) {
			t.Errorf("job %d: its tokens %v are not a prefix of its tokens alone %v", i, j.res.Tokens, want[i])
		}
	}
	after := s.Stats().KV
	if after.Free != before.Free || after.Used != 0 {
		t.Errorf("KV blocks free %d before, %d after (%d used)", before.Free, after.Free, after.Used)
	}
}

// admitWhenFree admits r, stepping the scheduler until a slot and blocks
// are free.
func admitWhenFree(t *testing.T, s *Scheduler, r *Request) error {
	t.Helper()
	for range 100000 {
		err := s.Admit(r)
		if !errors.Is(err, ErrNoSlot) && !errors.Is(err, kvcache.ErrNoBlocks) {
			return err
		}
		s.Step()
	}
	t.Fatal("no slot came free")
	return nil
}

// A pool too small for two requests at once admits the second when the
// first has ended, and refuses one larger than the pool outright.
func TestOutOfBlocksWaitsOrRefuses(t *testing.T) {
	dev := openStories(t)
	perBlock := int64(4 * 5 * 2 * 32 * 4) // stories260k: 5 layers, k and v of 4 heads × 8, float32, 4 tokens
	s := newScheduler(t, dev, Config{Slots: 4, PrefillChunk: 16, BlockTokens: 4, KVBytes: 6 * perBlock})
	if st := s.Stats(); st.KV.Blocks != 6 || st.KVBytes != 6*perBlock {
		t.Fatalf("%+v: want 6 blocks of %d bytes", st, perBlock)
	}
	a := &job{prompt: []int32{1, 2, 3, 4, 5}, params: runtime.GenerateParams{MaxTokens: 12}} // 17 positions: 5 blocks
	b := &job{prompt: []int32{9, 8, 7}, params: runtime.GenerateParams{MaxTokens: 6}}        // 9: 3 blocks
	if err := s.Admit(a.request()); err != nil {
		t.Fatal(err)
	}
	if err := s.Admit(b.request()); !errors.Is(err, kvcache.ErrNoBlocks) {
		t.Fatalf("second request: %v, want ErrNoBlocks", err)
	}
	if err := admitWhenFree(t, s, b.request()); err != nil {
		t.Fatal(err)
	}
	if a.res == nil {
		t.Error("the second request was admitted before the first ended")
	}
	big := &job{prompt: []int32{1}, params: runtime.GenerateParams{MaxTokens: 30}}
	if err := s.Admit(big.request()); !errors.Is(err, kvcache.ErrTooLarge) {
		t.Errorf("a request of 31 positions in a pool of 24: %v, want ErrTooLarge", err)
	}
	for s.Running() > 0 {
		s.Step()
	}
	if b.res == nil || len(b.res.Tokens) == 0 {
		t.Errorf("the waiting request did not run: %+v", b.res)
	}
}

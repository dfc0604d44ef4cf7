// Package batching runs many generations on one BatchDevice at once
// (continuous batching): up to Slots sequences in flight over a paged KV
// cache (runtime/kvcache), new ones joining between steps, prompts
// prefilled in chunks beside the running sequences' decode tokens, and
// prompts that start with cached blocks prefilling only the rest. Each
// sequence samples and ends by its own request's settings, by the rules
// runtime.Generate applies (runtime.Generation).
//
// A sequence alone in flight runs on the batch's solo sequence
// (runtime.SoloBatch) where the device has one: the single-sequence step
// --slots 1 runs, so that one stream under slots costs what it costs
// without. Its keys and values move between its pool blocks and the solo
// cache where the paths meet: a block it fills alone is copied into its
// pool block as it fills (the pool and its prefix hashes stay as the
// batched step leaves them), the partial last block when another sequence
// joins, and positions computed in the batch or taken from the prefix
// cache into the solo cache before it runs alone again.
package batching

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/kvcache"
)

// Config sizes a Scheduler.
type Config struct {
	Slots        int   // sequences in flight at most
	PrefillChunk int   // prompt tokens one step takes at most, over all prefilling sequences
	BlockTokens  int   // positions of one KV block (default 16)
	KVBytes      int64 // the KV pool; 0: the device's default
}

// DefaultBlockTokens is the KV block size when Config leaves it 0: vLLM's.
const DefaultBlockTokens = 16

// ErrNoSlot is returned by Admit when every slot is taken.
var ErrNoSlot = errors.New("every slot is taken")

// Request is one generation for the scheduler.
type Request struct {
	// Ctx ends the generation early (StopCancelled), checked between steps.
	Ctx    context.Context
	Prompt []int32
	// Params: Sampling, MaxTokens, StopTokens, ContextLength (0: the
	// device's); PrefillChunk is the scheduler's.
	Params runtime.GenerateParams
	// OnToken gets each generated token as runtime.Generate's onToken does,
	// on the scheduler's goroutine: a slow one holds up every sequence.
	OnToken func(id int32) bool
	// Done is called once when the generation ends: the result, and an
	// error when the device failed.
	Done func(res runtime.GenerateResult, err error)
}

// Scheduler steps the admitted sequences together. Admit and Step are
// called from one goroutine; Stats from any.
type Scheduler struct {
	batch  runtime.Batch
	cfg    Config
	ctxLen int
	vocab  int
	step   int // StepTokens of the batch

	mu     sync.Mutex // pool and slots, for Stats
	pool   *kvcache.Pool
	slots  []*slot          // nil where free
	tables []*kvcache.Table // one per slot, reused
	order  uint64           // admissions so far: prefill goes oldest first
	// solo is the batch's single sequence (nil: the device has none), and
	// soloOf the sequence whose positions [0, solo.Solo().Pos()) its cache
	// holds (nil: none).
	solo   runtime.SoloBatch
	soloOf *slot
	chunk  int // prompt tokens a solo step takes at most
	// Scratch reused by every step.
	rows  []runtime.BatchRow
	in    []*slot
	draws []runtime.BatchDraw
}

// slot is one sequence in flight.
type slot struct {
	req    *Request
	gen    *runtime.Generation
	table  *kvcache.Table
	prompt int
	fed    int // positions whose keys and values are computed
	// stored is how many of them are in the slot's pool blocks: all but
	// for the sequence that runs alone (soloOf), whose positions since
	// its last full block live in the solo cache only.
	stored   int
	admitted uint64
	start    time.Time // admitted
	decoding time.Time // first token sampled; zero before
}

// New makes a scheduler over dev: its batched step and a KV pool.
func New(dev runtime.BatchDevice, cfg Config) (*Scheduler, error) {
	info := dev.Info()
	if cfg.BlockTokens == 0 {
		cfg.BlockTokens = DefaultBlockTokens
	}
	if cfg.Slots < 1 || cfg.PrefillChunk < 1 || cfg.BlockTokens < 1 {
		return nil, fmt.Errorf("batching: %d slots, prefill chunks of %d, blocks of %d tokens: each must be at least 1", cfg.Slots, cfg.PrefillChunk, cfg.BlockTokens)
	}
	stepTokens := max(cfg.PrefillChunk, cfg.Slots)
	batch, err := dev.NewBatch(runtime.BatchConfig{Sequences: cfg.Slots, StepTokens: stepTokens, BlockTokens: cfg.BlockTokens, KVBytes: cfg.KVBytes, Solo: true})
	if err != nil {
		return nil, err
	}
	pool, err := kvcache.NewPool(batch.Blocks(), cfg.BlockTokens)
	if err != nil {
		batch.Close()
		return nil, err
	}
	s := &Scheduler{
		batch: batch, cfg: cfg, ctxLen: info.ContextLength, vocab: info.Vocab, step: stepTokens,
		pool: pool, slots: make([]*slot, cfg.Slots), tables: make([]*kvcache.Table, cfg.Slots),
		rows: make([]runtime.BatchRow, 0, cfg.Slots), in: make([]*slot, 0, cfg.Slots), draws: make([]runtime.BatchDraw, 0, cfg.Slots),
		chunk: min(cfg.PrefillChunk, info.MaxTokens),
	}
	if sb, ok := batch.(runtime.SoloBatch); ok && sb.Solo() != nil {
		s.solo = sb
	}
	for i := range s.tables {
		s.tables[i] = kvcache.NewTable(pool.BlocksFor(info.ContextLength))
	}
	return s, nil
}

// Close frees the KV pool; the caller has ended every sequence.
func (s *Scheduler) Close() error { return s.batch.Close() }

// Stats is the scheduler's state for health and metrics.
type Stats struct {
	Slots, Running int
	KV             kvcache.Stats
	KVBytes        int64 // the pool's size in bytes
}

// Stats says how many sequences run and how the KV pool is used.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Slots: len(s.slots), KV: s.pool.Stats()}
	st.KVBytes = int64(st.KV.Blocks) * s.batch.KVBytesPerBlock()
	for _, sl := range s.slots {
		if sl != nil {
			st.Running++
		}
	}
	return st
}

// Running is the number of sequences in flight.
func (s *Scheduler) Running() int { return s.Stats().Running }

// Positions is how many KV positions a request needs: its prompt and every
// token it may generate, within the context.
func (s *Scheduler) positions(r *Request) int {
	ctxLen := s.contextLength(r)
	return min(len(r.Prompt)+r.Params.MaxTokens, ctxLen)
}

func (s *Scheduler) contextLength(r *Request) int {
	if n := r.Params.ContextLength; n > 0 && n <= s.ctxLen {
		return n
	}
	return s.ctxLen
}

// Fits reports whether r could ever be admitted: ErrTooLarge (wrapped)
// when its KV positions need more blocks than the pool holds.
func (s *Scheduler) Fits(r *Request) error {
	need := s.pool.BlocksFor(s.positions(r))
	if need > s.pool.Blocks() {
		return fmt.Errorf("batching: %d KV positions need %d blocks of %d tokens; the pool holds %d: %w",
			s.positions(r), need, s.cfg.BlockTokens, s.pool.Blocks(), kvcache.ErrTooLarge)
	}
	return nil
}

// Admit starts r in a free slot with the KV blocks of its prompt and of
// every token it may generate (taken now, so a running sequence never runs
// out), its prompt's cached prefix shared. ErrNoSlot or kvcache.ErrNoBlocks:
// try again after a step; kvcache.ErrTooLarge: never; another error: the
// request is invalid. Done is not called when Admit fails.
func (s *Scheduler) Admit(r *Request) error {
	p := r.Params
	if p.ContextLength <= 0 || p.ContextLength > s.ctxLen {
		p.ContextLength = s.ctxLen
	}
	gen, err := runtime.NewGeneration(r.Prompt, p, r.OnToken)
	if err != nil {
		return err
	}
	if err := s.Fits(r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	free := -1
	for i, sl := range s.slots {
		if sl == nil {
			free = i
			break
		}
	}
	if free < 0 {
		return ErrNoSlot
	}
	table := s.tables[free]
	cached, err := s.pool.Acquire(table, r.Prompt, s.positions(r))
	if err != nil {
		return err
	}
	s.order++
	s.slots[free] = &slot{req: r, gen: gen, table: table, prompt: len(r.Prompt), fed: cached, stored: cached, admitted: s.order, start: time.Now()}
	return nil
}

// Idle reports whether no sequence is in flight.
func (s *Scheduler) Idle() bool { return s.Running() == 0 }

// Step ends the sequences whose request was cancelled, then runs one
// batched step: every decoding sequence's token, and prompt chunks of the
// prefilling ones, oldest first, up to PrefillChunk tokens (and the step's
// limit); or, for a sequence alone in flight, one step of the solo
// sequence. Sequences that end are released and told (Done). A device
// error ends every sequence of the step with it.
func (s *Scheduler) Step() {
	// Only this goroutine writes slots (under mu, for Stats), so it reads
	// them without the lock.
	for _, sl := range s.slots {
		if sl != nil && sl.req.Ctx.Err() != nil {
			s.finish(sl, runtime.StopCancelled, nil)
		}
	}
	var alone *slot
	running := 0
	for _, sl := range s.slots {
		if sl != nil {
			running++
			alone = sl
		}
	}
	if s.solo != nil && running == 1 {
		s.stepAlone(alone)
		return
	}
	// The sequence that ran alone joins the batch: its positions since its
	// last stored block go to its blocks first.
	if sl := s.soloOf; sl != nil && sl.stored < sl.fed {
		if err := s.solo.StoreSolo(sl.table.Blocks(), sl.stored, sl.fed); err != nil {
			s.finish(sl, "", err)
		} else {
			sl.stored = sl.fed
		}
	}
	s.rows, s.in = s.rows[:0], s.in[:0]
	// Decoding sequences first: one token each.
	for _, sl := range s.slots {
		if sl != nil && sl.fed >= sl.prompt {
			s.add(sl, 1)
		}
	}
	budget := min(s.cfg.PrefillChunk, s.step-len(s.rows))
	for budget > 0 {
		var next *slot
		for _, sl := range s.slots {
			if sl != nil && sl.fed < sl.prompt && !slices.Contains(s.in, sl) && (next == nil || sl.admitted < next.admitted) {
				next = sl
			}
		}
		if next == nil {
			break
		}
		n := min(next.prompt-next.fed, budget)
		s.add(next, n)
		budget -= n
	}
	if len(s.rows) == 0 {
		return
	}
	var logits []float32
	var ids []int32 // each row's token, where the device picked or drew them
	var err error
	ctx := context.Background()
	if p, ok := s.batch.(runtime.BatchPicker); ok && s.greedyStep() {
		ids, err = p.StepGreedy(ctx, s.rows)
	} else if bs, ok := s.batch.(runtime.BatchSampler); ok {
		ids, err = bs.StepSample(ctx, s.rows, s.stepDraws())
	} else {
		logits, err = s.batch.Step(ctx, s.rows)
	}
	now := time.Now()
	for i, sl := range s.in {
		if err != nil {
			s.finish(sl, "", err)
			continue
		}
		sl.fed += len(s.rows[i].Tokens)
		sl.stored = sl.fed
		s.commit(sl)
		if sl.fed < sl.prompt {
			continue // mid-prompt
		}
		var id int32
		if ids != nil {
			id = ids[i]
		} else {
			id = sl.gen.Sampler.Sample(logits[i*s.vocab:(i+1)*s.vocab], sl.gen.Recent(), sl.fed)
		}
		s.accept(sl, id, now)
	}
}

// stepAlone runs one step of sl, alone in flight, on the solo sequence:
// its next prompt chunk, or its decode token and the draw after it, as
// runtime.Generate does over a sequence. The solo cache first takes what
// it lacks of sl's positions from the pool; each block the step fills
// goes to sl's pool block.
func (s *Scheduler) stepAlone(sl *slot) {
	seq := s.solo.Solo()
	if s.soloOf != sl || seq.Pos() != sl.fed {
		from := seq.Pos()
		if s.soloOf != sl {
			from = 0 // another sequence's positions: sl's replace them
		}
		s.soloOf = sl
		if err := s.solo.LoadSolo(sl.table.Blocks(), from, sl.fed); err != nil {
			s.finish(sl, "", err)
			return
		}
	}
	h := sl.gen.History()
	n := 1
	if sl.fed < sl.prompt {
		n = min(sl.prompt-sl.fed, s.chunk)
	}
	tokens := h[sl.fed : sl.fed+n]
	ctx := context.Background()
	var id int32
	var err error
	if sl.fed+n < sl.prompt {
		_, err = seq.Forward(ctx, tokens)
	} else {
		id, err = runtime.ForwardSample(ctx, seq, tokens, sl.gen.Sampler, sl.gen.Recent())
	}
	if err != nil {
		s.finish(sl, "", err)
		return
	}
	sl.fed += n
	bt := s.cfg.BlockTokens
	if full := sl.fed / bt * bt; full > sl.stored {
		if err := s.solo.StoreSolo(sl.table.Blocks(), sl.stored, full); err != nil {
			s.finish(sl, "", err)
			return
		}
		sl.stored = full
		s.commit(sl)
	}
	if sl.fed < sl.prompt {
		return // mid-prompt
	}
	s.accept(sl, id, time.Now())
}

// commit registers sl's full blocks that hold its stored positions, for
// later prompts that start with the same tokens.
func (s *Scheduler) commit(sl *slot) {
	s.mu.Lock()
	s.pool.Commit(sl.table, sl.gen.History(), sl.stored)
	s.mu.Unlock()
}

// accept takes id, sampled after sl's step that ended at now, and ends sl
// where that ends its generation.
func (s *Scheduler) accept(sl *slot, id int32, now time.Time) {
	if sl.decoding.IsZero() {
		sl.decoding = now
	}
	if reason := sl.gen.Accept(id); reason != "" {
		s.finish(sl, reason, nil)
	} else if sl.req.Ctx.Err() != nil {
		s.finish(sl, runtime.StopCancelled, nil)
	}
}

// greedyStep reports whether every row of the step that samples a token
// (whose prompt the step completes) takes its largest logit as it stands,
// so the device's greedy picks serve it (runtime.BatchPicker).
func (s *Scheduler) greedyStep() bool {
	for i, sl := range s.in {
		fed := sl.fed + len(s.rows[i].Tokens)
		if fed < sl.prompt {
			continue
		}
		if st := sl.gen.Sampler.Step(sl.gen.Recent(), fed, s.vocab); !st.Greedy() {
			return false
		}
	}
	return true
}

// stepDraws is how each row of the step draws its token: its sampler,
// where the step completes its prompt.
func (s *Scheduler) stepDraws() []runtime.BatchDraw {
	s.draws = s.draws[:0]
	for i, sl := range s.in {
		var d runtime.BatchDraw
		if sl.fed+len(s.rows[i].Tokens) >= sl.prompt {
			d = runtime.BatchDraw{Sampler: sl.gen.Sampler, Recent: sl.gen.Recent()}
		}
		s.draws = append(s.draws, d)
	}
	return s.draws
}

// add puts n of sl's pending tokens in this step.
func (s *Scheduler) add(sl *slot, n int) {
	h := sl.gen.History()
	s.rows = append(s.rows, runtime.BatchRow{Tokens: h[sl.fed : sl.fed+n], Pos: sl.fed, Blocks: sl.table.Blocks()})
	s.in = append(s.in, sl)
}

// finish releases sl's blocks and slot, then tells its request how it
// ended.
func (s *Scheduler) finish(sl *slot, reason string, err error) {
	if s.soloOf == sl {
		s.soloOf = nil
	}
	s.mu.Lock()
	s.pool.Release(sl.table)
	s.slots[slices.Index(s.slots, sl)] = nil
	s.mu.Unlock()
	now := time.Now()
	if sl.decoding.IsZero() {
		sl.gen.Timing(now.Sub(sl.start), 0)
	} else {
		sl.gen.Timing(sl.decoding.Sub(sl.start), now.Sub(sl.decoding))
	}
	if sl.req.Done != nil {
		sl.req.Done(sl.gen.End(reason), err)
	}
}

package cpu

import (
	"context"
	"errors"
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
)

var (
	_ runtime.BatchDevice  = (*Device)(nil)
	_ runtime.BatchPicker  = (*Batch)(nil)
	_ runtime.BatchSampler = (*Batch)(nil)
)

// Batch is the CPU device's paged KV pool and batched step: every row of a
// step goes through one program run, each weight read once for all rows
// (the GEMM the GPU's batched GEMV will be), attention per row over its own
// sequence's blocks.
type Batch struct {
	dev    *Device
	pr     *program
	cfg    runtime.BatchConfig
	gather *ir.Node
	split  int // steps[:split] run per token, steps[split:] per sequence
	kv     *kvStore
	blocks int
	solo   *Sequence // BatchConfig.Solo's; nil without
	// Scratch reused by every step: no allocation per step.
	st     stepState
	ends   []int           // each row's end in the step's token rows
	greedy *sample.Sampler // StepGreedy's: temperature 0, no penalties
	picks  []int32
}

// NewBatch allocates a pool of float32 KV blocks and binds the batched
// program; with cfg.Solo also a solo sequence of the device's context. The
// default pool holds cfg.Sequences full contexts.
func (d *Device) NewBatch(cfg runtime.BatchConfig) (runtime.Batch, error) {
	if cfg.Sequences < 1 || cfg.StepTokens < cfg.Sequences || cfg.BlockTokens < 1 || cfg.KVBytes < 0 {
		return nil, fmt.Errorf("cpu: a batch of %d sequences, %d tokens a step, blocks of %d tokens and %d KV bytes: need sequences ≥ 1, step tokens ≥ sequences, block tokens ≥ 1", cfg.Sequences, cfg.StepTokens, cfg.BlockTokens, cfg.KVBytes)
	}
	bg, err := newBatchGraph(d.plan.Manifest.Graph, cfg.StepTokens)
	if err != nil {
		return nil, err
	}
	pr, err := bindProgram(d.plan, bg.g, d.prog.threads, true)
	if err != nil {
		return nil, err
	}
	pr.route = d.prog.route
	perBlock := kvBytes(pr.kv, cfg.BlockTokens)
	blocks := cfg.Sequences * ((d.info.ContextLength + cfg.BlockTokens - 1) / cfg.BlockTokens)
	if cfg.KVBytes > 0 {
		if blocks = int(cfg.KVBytes / max(1, perBlock)); blocks < 1 {
			return nil, fmt.Errorf("cpu: a KV pool of %d bytes holds no block of %d tokens (%d bytes)", cfg.KVBytes, cfg.BlockTokens, perBlock)
		}
	}
	if err := checkHostMemory(int64(blocks)*perBlock, fmt.Sprintf("a KV pool of %d blocks of %d tokens", blocks, cfg.BlockTokens)); err != nil {
		return nil, err
	}
	split := len(pr.steps)
	for i, s := range pr.steps {
		if bg.tail[s.node] {
			split = i
			break
		}
	}
	b := &Batch{
		dev: d, pr: pr, cfg: cfg, gather: bg.gather, split: split,
		kv: newKVStore(pr.kv, blocks, cfg.BlockTokens), blocks: blocks,
		st: stepState{
			tokens:    make([]int32, 0, cfg.StepTokens),
			positions: make([]int32, 0, cfg.StepTokens),
			rowSeq:    make([]int32, 0, cfg.StepTokens),
			seqs:      make([]kvCache, 0, cfg.Sequences),
			// decodeRows: a row's arithmetic is the same whatever rows
			// share its step.
			decodeRows: true,
		},
		ends:   make([]int, 0, cfg.Sequences),
		greedy: sample.New(sample.Params{}),
		picks:  make([]int32, cfg.Sequences),
	}
	if cfg.Solo {
		if b.solo, err = d.newSolo(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Blocks is the pool's size in blocks.
func (b *Batch) Blocks() int { return b.blocks }

// KVBytesPerBlock is one block's keys and values over all layers.
func (b *Batch) KVBytesPerBlock() int64 { return kvBytes(b.pr.kv, b.cfg.BlockTokens) }

// Close drops the pool.
func (b *Batch) Close() error {
	b.dev.mu.Lock()
	defer b.dev.mu.Unlock()
	b.kv = nil
	if b.solo != nil {
		b.solo.kv = nil
	}
	return nil
}

// Step runs rows as one program run: the per-token part over all their
// tokens, then each row's last token gathered and the tail (final norm, LM
// head) for one row per sequence.
func (b *Batch) Step(ctx context.Context, rows []runtime.BatchRow) ([]float32, error) {
	if err := b.load(rows); err != nil {
		return nil, err
	}
	b.dev.mu.Lock()
	defer b.dev.mu.Unlock()
	if b.kv == nil {
		return nil, errors.New("cpu: the batch is closed")
	}
	if err := b.dev.mapped(); err != nil {
		return nil, err
	}
	pr, st := b.pr, &b.st
	st.t = len(st.tokens)
	for _, s := range pr.steps[:b.split] {
		if err := b.runStep(ctx, s); err != nil {
			return nil, err
		}
	}
	x, c := pr.bufs[b.gather], cols(b.gather)
	for i, end := range b.ends {
		// ends[i]-1 ≥ i: the copies never overwrite a row still to be read.
		copy(x[i*c:(i+1)*c], x[(end-1)*c:end*c])
	}
	st.t = len(rows)
	for _, s := range pr.steps[b.split:] {
		if err := b.runStep(ctx, s); err != nil {
			return nil, err
		}
	}
	return pr.bufs[pr.output][:len(rows)*pr.vocab], nil
}

// StepGreedy is Step, then each row's greedy pick by the sampler's own
// rule. The ids are valid until the next step.
func (b *Batch) StepGreedy(ctx context.Context, rows []runtime.BatchRow) ([]int32, error) {
	logits, err := b.Step(ctx, rows)
	if err != nil {
		return nil, err
	}
	v := b.pr.vocab
	for i := range rows {
		b.picks[i] = b.greedy.Sample(logits[i*v:(i+1)*v], nil, 0)
	}
	return b.picks[:len(rows)], nil
}

// StepSample is Step, then each row's draw by its sampler: the CPU device
// samples on the host, as a sequence's Generate does.
func (b *Batch) StepSample(ctx context.Context, rows []runtime.BatchRow, draws []runtime.BatchDraw) ([]int32, error) {
	if len(draws) != len(rows) {
		return nil, fmt.Errorf("cpu: %d draws for %d rows", len(draws), len(rows))
	}
	logits, err := b.Step(ctx, rows)
	if err != nil {
		return nil, err
	}
	v := b.pr.vocab
	for i, dr := range draws {
		b.picks[i] = -1
		if dr.Sampler != nil {
			b.picks[i] = dr.Sampler.Sample(logits[i*v:(i+1)*v], dr.Recent, rows[i].Pos+len(rows[i].Tokens))
		}
	}
	return b.picks[:len(rows)], nil
}

func (b *Batch) runStep(ctx context.Context, s step) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.run(&b.st); err != nil {
		return fmt.Errorf("cpu: %%%d %s: %w", s.node.ID, s.node.Op, err)
	}
	return nil
}

// load checks rows against the batch's limits and lays them out in the
// step state: tokens and positions row after row, each token's sequence.
func (b *Batch) load(rows []runtime.BatchRow) error {
	st := &b.st
	st.tokens, st.positions, st.rowSeq, st.seqs, b.ends = st.tokens[:0], st.positions[:0], st.rowSeq[:0], st.seqs[:0], b.ends[:0]
	if len(rows) == 0 || len(rows) > b.cfg.Sequences {
		return fmt.Errorf("cpu: a step of %d rows; the batch takes 1 to %d: %w", len(rows), b.cfg.Sequences, runtime.ErrBatchRows)
	}
	total := 0
	for _, r := range rows {
		total += len(r.Tokens)
	}
	if total > b.cfg.StepTokens {
		return fmt.Errorf("cpu: a step of %d tokens; the batch takes %d: %w", total, b.cfg.StepTokens, runtime.ErrBatchRows)
	}
	bt, ctxLen := b.cfg.BlockTokens, b.dev.info.ContextLength
	for i, r := range rows {
		end := r.Pos + len(r.Tokens)
		switch {
		case len(r.Tokens) == 0:
			return fmt.Errorf("cpu: row %d has no tokens: %w", i, runtime.ErrBatchRows)
		case r.Pos < 0 || end > len(r.Blocks)*bt:
			return fmt.Errorf("cpu: row %d puts %d tokens at position %d, its %d blocks hold %d: %w", i, len(r.Tokens), r.Pos, len(r.Blocks), len(r.Blocks)*bt, runtime.ErrBatchRows)
		case end > ctxLen:
			return fmt.Errorf("cpu: row %d: %d tokens at position %d pass the context of %d: %w", i, len(r.Tokens), r.Pos, ctxLen, runtime.ErrContextFull)
		}
		for _, blk := range r.Blocks[:(end+bt-1)/bt] {
			if blk < 0 || int(blk) >= b.blocks {
				return fmt.Errorf("cpu: row %d names block %d; the pool holds %d: %w", i, blk, b.blocks, runtime.ErrBatchRows)
			}
		}
		for j, id := range r.Tokens {
			if id < 0 || int(id) >= b.pr.vocab {
				return fmt.Errorf("cpu: token id %d is outside the vocabulary of %d", id, b.pr.vocab)
			}
			st.tokens = append(st.tokens, id)
			st.positions = append(st.positions, int32(r.Pos+j))
			st.rowSeq = append(st.rowSeq, int32(i))
		}
		st.seqs = append(st.seqs, kvCache{store: b.kv, table: r.Blocks})
		b.ends = append(b.ends, len(st.tokens))
	}
	return nil
}

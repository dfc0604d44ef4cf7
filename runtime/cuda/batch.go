package cuda

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
)

var (
	_ runtime.BatchDevice = (*Device)(nil)
	_ runtime.BatchPicker = (*Batch)(nil)
)

// batchMargin is the VRAM a default pool leaves free (cfg.KVBytes 0):
// the driver's and the sampler's needs and a sequence's graph.
const batchMargin = 1 << 30

// Batch is the CUDA device's paged KV pool and batched step: the plan's
// Batch schedule over all the step's tokens, then its BatchRows schedule
// over its rows, in plain stream order (codegen/cuda/batch.go says what
// they compute); a step of decode tokens alone replays its bucket's graph
// of the two. One allocation holds the pool, the batch region and the
// batch's own state block.
type Batch struct {
	d      *Device
	lim    batchLimits
	alloc  devptr
	bytes  int64
	reg    regions
	host   []byte                // pinned image of the state block
	out    []byte                // pinned: the rows' logits, or their picks
	tokens [tokenSchedules]batch // each per-token schedule's launches (tokenSchedule's index), resolved
	rows   batch                 // the per-row launches, resolved
	// graphs are the decode-only steps captured, by bucket (decodeBucket)
	// and the keys their rows see (graphKey): a step of n rows of one token
	// each replays its graph, padded with rows in the reserved block.
	graphs map[graphKey]graph
	picks  []int32
	greedy *sample.Sampler // a row whose logits are not all finite is picked on the host
	solo   *sequence       // BatchConfig.Solo's; nil without
	draws  *rowDraws       // StepSample's; nil without a GPU sampler
	closed bool
}

// checkBatch refuses a plan's batched step the runtime cannot run: its
// schedules at their T limits, its state fields past the single-sequence
// block and in order, the logits inside the batch region. A plan without
// one passes (it cannot batch; NewBatch says so).
func checkBatch(k *plans.Kernels, m *plans.Manifest) error {
	if len(k.Batch) == 0 && len(k.BatchRows) == 0 {
		return nil
	}
	maxT := int64(m.Memory.MaxTokens)
	if k.BatchMaxRows < 1 || int64(k.BatchMaxRows) > maxT || len(k.Batch) == 0 || len(k.BatchRows) == 0 {
		return fmt.Errorf("batched step of %d and %d launches for %d rows (max_tokens %d)", len(k.Batch), len(k.BatchRows), k.BatchMaxRows, maxT)
	}
	if err := checkSchedule("batch", k.Batch, maxT); err != nil {
		return err
	}
	if err := checkSchedule("batch rows", k.BatchRows, int64(k.BatchMaxRows)); err != nil {
		return err
	}
	if (len(k.BatchDecode) == 0) != (k.BatchDecodeMaxRows == 0) || k.BatchDecodeMaxRows < 0 || k.BatchDecodeMaxRows > k.BatchMaxRows {
		return fmt.Errorf("batched decode step of %d launches for %d rows (the batched step takes %d)", len(k.BatchDecode), k.BatchDecodeMaxRows, k.BatchMaxRows)
	}
	if err := checkSchedule("batch decode", k.BatchDecode, int64(k.BatchDecodeMaxRows)); err != nil {
		return err
	}
	for i, l := range k.BatchDecode { // its graphs are keyed by graphKeyTile's tiles (graphKeyOf)
		if l.Splits != nil && l.Splits.KeyTile != graphKeyTile {
			return fmt.Errorf("batch decode launch %d (%s): splits by key tiles of %d keys; graphs are keyed by %d", i, l.Kernel, l.Splits.KeyTile, graphKeyTile)
		}
	}
	if len(k.BatchFew) > 0 && len(k.BatchDecode) == 0 {
		return fmt.Errorf("a few-token batched step of %d launches without a batched decode step's row bound", len(k.BatchFew))
	}
	if err := checkSchedule("batch few", k.BatchFew, int64(k.BatchDecodeMaxRows)); err != nil {
		return err
	}
	st := &k.State
	rows := int64(k.BatchMaxRows)
	for _, f := range []struct {
		name      string
		off, size int64
	}{{"rows", st.Rows, 16}, {"paging", st.Paging, 8}, {"row_of", st.RowOf, 4 * maxT}, {"last_tokens", st.LastTokens, 4 * rows}, {"picks", st.Picks, 8 * rows}} {
		if f.off < st.Bytes || f.off%4 != 0 || f.off+f.size > st.Tables {
			return fmt.Errorf("batch state field %s [%d, +%d) lies outside [%d, %d), the batch's fields", f.name, f.off, f.size, st.Bytes, st.Tables)
		}
	}
	if lb := 4 * rows * int64(m.Model.Vocab); k.BatchLogits < 0 || k.BatchLogits+lb > k.BatchBytes {
		return fmt.Errorf("batch logits [%d, +%d) lie outside the %d-byte batch region", k.BatchLogits, lb, k.BatchBytes)
	}
	return nil
}

// NewBatch allocates a pool of fp16 KV blocks (cfg.KVBytes, or the free
// VRAM less batchMargin), the batch region and state block of the plan's
// batched step, and with cfg.Solo first the solo sequence. A plan compiled
// without a batched step cannot batch.
func (d *Device) NewBatch(cfg runtime.BatchConfig) (runtime.Batch, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errors.New("cuda: device is closed")
	}
	if d.batch != nil {
		return nil, errors.New("cuda: the device has a batch open; close it first")
	}
	m := &d.plan.Manifest
	k := m.Kernels
	if len(k.Batch) == 0 {
		return nil, fmt.Errorf("cuda: plan %s has no batched step: recompile it with this orcc (orcc compile) to run more than one sequence a step", d.plan.Dir)
	}
	if cfg.Sequences < 1 || cfg.Sequences > k.BatchMaxRows || cfg.StepTokens < cfg.Sequences || cfg.StepTokens > m.Memory.MaxTokens || cfg.BlockTokens < 1 || cfg.KVBytes < 0 {
		return nil, fmt.Errorf("cuda: a batch of %d sequences, %d tokens a step, blocks of %d tokens and %d KV bytes: need 1 to %d sequences (the plan's batched rows), step tokens from the sequences to the plan's max_tokens %d, block tokens ≥ 1",
			cfg.Sequences, cfg.StepTokens, cfg.BlockTokens, cfg.KVBytes, k.BatchMaxRows, m.Memory.MaxTokens)
	}
	var solo *sequence
	if cfg.Solo {
		var err error
		if solo, err = d.newSolo(); err != nil {
			return nil, err
		}
	}
	b, err := d.newBatch(cfg, solo)
	if err != nil {
		return nil, errors.Join(err, d.dropSolo(solo))
	}
	return b, nil
}

// newBatch is NewBatch's allocations beside the solo sequence; d.mu is
// held.
func (d *Device) newBatch(cfg runtime.BatchConfig, solo *sequence) (*Batch, error) {
	m := &d.plan.Manifest
	k := m.Kernels
	vocab := m.Model.Vocab
	lim := batchLimits{rows: cfg.Sequences, tokens: cfg.StepTokens, blockTokens: cfg.BlockTokens,
		stride: tableStride(d.ctx, cfg.BlockTokens), ctx: d.ctx, vocab: vocab}
	perBlock := kvBytes(&m.Model, cfg.BlockTokens)
	stateBytes := batchStateBytes(&k.State, cfg.Sequences, lim.stride)
	draws := newRowDraws(d, &k.State, cfg.Sequences)
	fixed := align(k.BatchBytes) + align(stateBytes) + draws.bytes(cfg.Sequences)
	pool := cfg.KVBytes
	if pool == 0 {
		free, _, err := d.g.memInfo()
		if err != nil {
			return nil, err
		}
		pool = free - fixed - batchMargin
	}
	if lim.blocks = int(pool / max(perBlock, 1)); lim.blocks < 1 {
		return nil, fmt.Errorf("%w: cuda: a KV pool of %d bytes holds no block of %d tokens (%d bytes)", runtime.ErrOutOfMemory, pool, cfg.BlockTokens, perBlock)
	}
	// One block more than the sequences get: decodeBucket's padding rows'.
	if lim.blocks--; lim.blocks < 1 {
		return nil, fmt.Errorf("%w: cuda: a KV pool of %d bytes holds no block of %d tokens (%d bytes) beside the one it reserves", runtime.ErrOutOfMemory, pool, cfg.BlockTokens, perBlock)
	}
	pool = int64(lim.blocks+1) * perBlock
	b := &Batch{d: d, lim: lim, bytes: align(pool) + fixed, greedy: sample.New(sample.Params{}), picks: make([]int32, cfg.Sequences), graphs: map[graphKey]graph{}, solo: solo, draws: draws}
	what := fmt.Sprintf("a KV pool of %d blocks of %d tokens and a batched step of %d rows", lim.blocks, cfg.BlockTokens, cfg.Sequences)
	if err := d.fits(b.bytes, what); err != nil {
		return nil, err
	}
	var err error
	if b.alloc, err = d.g.alloc(b.bytes); err != nil {
		return nil, d.outOfMemory(err, b.bytes, what)
	}
	d.kvBytes += b.bytes
	base := uint64(b.alloc)
	b.reg = d.reg
	b.reg.pool, b.reg.poolBytes = base, pool
	b.reg.batch, b.reg.batchBytes = base+uint64(align(pool)), k.BatchBytes
	b.reg.state, b.reg.stateBytes = b.reg.batch+uint64(align(k.BatchBytes)), stateBytes
	if b.host, err = d.g.hostAlloc(int(stateBytes)); err == nil {
		// The rows' logits, or their picks and draw keys.
		b.out, err = d.g.hostAlloc(4 * cfg.Sequences * max(vocab, 4))
	}
	if draws != nil && err == nil {
		draws.states = b.reg.state + uint64(align(stateBytes))
		draws.host, err = d.g.hostAlloc(int(int64(cfg.Sequences) * draws.window))
	}
	if err == nil {
		err = d.g.memset(devptr(b.reg.batch), 0, fixed)
	}
	if err != nil {
		b.solo = nil // NewBatch drops it
		return nil, errors.Join(err, b.free())
	}
	d.batch = b
	return b, nil
}

// Blocks is the pool's size in blocks.
func (b *Batch) Blocks() int { return b.lim.blocks }

// KVBytesPerBlock is one block's keys and values over all layers.
func (b *Batch) KVBytesPerBlock() int64 {
	return kvBytes(&b.d.plan.Manifest.Model, b.lim.blockTokens)
}

// Step runs rows and returns their last tokens' logits, valid until the
// next step.
func (b *Batch) Step(ctx context.Context, rows []runtime.BatchRow) ([]float32, error) {
	b.d.mu.Lock()
	defer b.d.mu.Unlock()
	if err := b.run(ctx, rows); err != nil {
		return nil, err
	}
	return b.logits(len(rows))
}

// logits copies the last step's n rows of logits into the pinned buffer,
// once the queued work is done; d.mu is held.
func (b *Batch) logits(n int) ([]float32, error) {
	v := b.d.plan.Manifest.Model.Vocab
	if err := b.d.g.copyDtoH(b.out[:4*n*v], devptr(b.reg.batch+uint64(b.d.plan.Manifest.Kernels.BatchLogits))); err != nil {
		return nil, err
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b.out[0])), n*v), nil
}

// StepGreedy runs rows and returns each row's greedy pick, which the step
// leaves on the device (plans.State.Picks): 8 bytes a row come back
// instead of its logits. A row whose logits are not all finite is picked
// on the host by the sampler's rule from its logits.
func (b *Batch) StepGreedy(ctx context.Context, rows []runtime.BatchRow) ([]int32, error) {
	b.d.mu.Lock()
	defer b.d.mu.Unlock()
	if err := b.run(ctx, rows); err != nil {
		return nil, err
	}
	n := len(rows)
	st := &b.d.plan.Manifest.Kernels.State
	if err := b.d.g.copyDtoH(b.out[:8*n], devptr(b.reg.state+uint64(st.Picks))); err != nil {
		return nil, err
	}
	var bad []int // rows whose logits are not all finite
	le := binary.LittleEndian
	for i := range n {
		b.picks[i] = int32(le.Uint32(b.out[8*i:]))
		if le.Uint32(b.out[8*i+4:]) != 0 {
			bad = append(bad, i)
		}
	}
	if len(bad) == 0 {
		return b.picks[:n], nil
	}
	logits, err := b.logits(n) // rewrites the pinned buffer: the flags are read
	if err != nil {
		return nil, err
	}
	v := b.d.plan.Manifest.Model.Vocab
	for _, i := range bad {
		b.picks[i] = b.greedy.Sample(logits[i*v:(i+1)*v], nil, 0)
	}
	return b.picks[:n], nil
}

// run checks rows, writes the state block and enqueues the step; d.mu is
// held.
func (b *Batch) run(ctx context.Context, rows []runtime.BatchRow) error {
	d := b.d
	if b.closed || d.closed {
		return errors.New("cuda: the batch is closed")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	k := d.plan.Manifest.Kernels
	keys := stepKeys(rows)
	bucket := 0 // a decode-only step's graph, unless launches are synchronised
	if !d.syncEach && !slices.ContainsFunc(rows, func(r runtime.BatchRow) bool { return len(r.Tokens) != 1 }) {
		bucket = decodeBucket(len(rows), b.lim.rows)
		if err := b.capture(bucket, keys); err != nil {
			return err
		}
	}
	// A step ends with a copy back, but a failed one may leave the last
	// state copy queued: wait before rewriting its pinned source.
	if err := d.g.sync(); err != nil {
		return err
	}
	tokens, n, err := writeBatchState(b.host, &k.State, &b.lim, rows, max(bucket-len(rows), 0))
	if err != nil {
		return err
	}
	if err := d.g.copyHtoD(devptr(b.reg.state), b.host[:n]); err != nil {
		return err
	}
	if bucket > 0 {
		return d.g.graphLaunch(b.graphs[graphKeyOf(bucket, keys)])
	}
	return b.launch(int64(tokens), int64(len(rows)), keys)
}

// stepKeys is the most keys a query of a step of rows sees: its longest
// row's last position, plus one.
func stepKeys(rows []runtime.BatchRow) int64 {
	var keys int64
	for _, r := range rows {
		keys = max(keys, int64(r.Pos+len(r.Tokens)))
	}
	return keys
}

// graphKey names a captured decode-only step: its bucket, and the highest
// bit of the key tiles its rows see, which fixes every split rule's count
// (plans.SplitRule: powers of two), so a graph's attention grids fit any
// step of the same key.
type graphKey struct{ bucket, keyBits int }

// graphKeyOf is the key of a step of bucket rows whose queries see at most
// keys keys, in tiles of ir's 64 keys (plans.SplitRule.KeyTile; a rule of
// another tile checkBatch refuses).
func graphKeyOf(bucket int, keys int64) graphKey {
	return graphKey{bucket, bits.Len64(uint64((keys + graphKeyTile - 1) / graphKeyTile))}
}

// graphKeyTile is the key tile graphKeyOf counts in.
const graphKeyTile = 64

// launch enqueues the per-token schedule at T = tokens (tokenSchedule's)
// and the per-row one at T = rows, for queries that see at most keys keys.
func (b *Batch) launch(tokens, rows, keys int64) error {
	d, k := b.d, b.d.plan.Manifest.Kernels
	s, sched := tokenSchedule(k, tokens, rows)
	if err := d.runSchedule(tokenScheduleNames[s], sched, tokens, keys, -1, &b.reg, &b.tokens[s]); err != nil {
		return err
	}
	return d.runSchedule("batch rows", k.BatchRows, rows, keys, -1, &b.reg, &b.rows)
}

// The per-token schedules of a batched step, as tokenSchedule numbers
// them, and their names.
const (
	scheduleBatch = iota
	scheduleDecode
	scheduleFew
	tokenSchedules
)

var tokenScheduleNames = [tokenSchedules]string{"batch", "batch decode", "batch few"}

// tokenSchedule is the per-token schedule of a step of tokens over rows,
// and its number: BatchDecode where every row is one token (tokens ==
// rows: each row has at least one) and the plan has one for that many
// rows, else BatchFew where the plan has one for that many tokens, else
// Batch.
func tokenSchedule(k *plans.Kernels, tokens, rows int64) (int, []plans.Launch) {
	small := tokens <= int64(k.BatchDecodeMaxRows)
	switch {
	case small && tokens == rows && len(k.BatchDecode) > 0:
		return scheduleDecode, k.BatchDecode
	case small && len(k.BatchFew) > 0:
		return scheduleFew, k.BatchFew
	}
	return scheduleBatch, k.Batch
}

// capture records, once, the step of bucket rows of one token each whose
// queries see at most keys keys as a graph, under its graphKey: everything
// else that changes between such steps lives in the state block, as for a
// sequence's decode graph; d.mu is held, nothing queued.
func (b *Batch) capture(bucket int, keys int64) error {
	gk := graphKeyOf(bucket, keys)
	if _, ok := b.graphs[gk]; ok {
		return nil
	}
	d := b.d
	if err := d.g.captureBegin(); err != nil {
		return err
	}
	// Keys in (1<<keyBits − 1) key tiles: the key's, so the attention
	// grids of its every step (keyBits ≥ 1: a row sees a key at least).
	lerr := b.launch(int64(bucket), int64(bucket), (int64(1)<<gk.keyBits-1)*graphKeyTile)
	x, err := d.g.captureEnd()
	if lerr != nil {
		if err == nil {
			err = d.g.graphDestroy(x)
		}
		return errors.Join(fmt.Errorf("cuda: capturing the batched decode step of %d rows: %w", bucket, lerr), err)
	}
	if err != nil {
		return fmt.Errorf("cuda: capturing the batched decode step of %d rows: %w", bucket, err)
	}
	b.graphs[gk] = x
	return nil
}

// Close frees the pool, the batch region and the state block.
func (b *Batch) Close() error {
	b.d.mu.Lock()
	defer b.d.mu.Unlock()
	if b.closed || b.d.closed {
		return nil
	}
	return b.free()
}

// free releases what NewBatch made, once the stream is idle; d.mu is held.
func (b *Batch) free() error {
	d := b.d
	b.closed = true
	if d.batch == b {
		d.batch = nil
	}
	err := d.g.sync()
	for gk, x := range b.graphs {
		err = errors.Join(err, d.g.graphDestroy(x))
		delete(b.graphs, gk)
	}
	hosts := []*[]byte{&b.host, &b.out}
	if b.draws != nil {
		hosts = append(hosts, &b.draws.host)
	}
	for _, h := range hosts {
		if *h != nil {
			err = errors.Join(err, d.g.hostFree(*h))
			*h = nil
		}
	}
	if b.alloc != 0 {
		err = errors.Join(err, d.g.free(b.alloc))
		d.kvBytes -= b.bytes
		b.alloc = 0
	}
	return errors.Join(err, d.dropSolo(b.solo))
}

package cuda

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
)

var _ runtime.BatchSampler = (*Batch)(nil)

// rowDraws is where a batch's rows draw their tokens with the plan's GPU
// sampler: a state block of the single-sequence layout a row, of which the
// sampler reads the draw settings (plans.State.Sample) and writes its draw
// key (the third word of plans.State.Greedy's picks), and the pinned host
// image of the window of each block that holds those two.
type rowDraws struct {
	states uint64 // device: rows blocks of stride bytes
	stride int64  // plans.State.Bytes
	lo     int64  // the window's start in a block
	window int64  // bytes: the picks and the draw settings
	host   []byte // pinned: rows windows
	steps  []sample.Step
	drawn  []int // rows the sampler draws this step
}

// newRowDraws sizes a batch's row draws; nil where the plan has no GPU
// sampler (its rows are then drawn on the host).
func newRowDraws(d *Device, st *plans.State, rows int) *rowDraws {
	if d.sampling == nil || st.Sample == 0 || st.Greedy == 0 {
		return nil
	}
	lo := min(st.Greedy, st.Sample)
	hi := max(st.Greedy+picksBytes, st.Sample+plans.SampleStepBytes)
	return &rowDraws{stride: st.Bytes, lo: lo, window: hi - lo, steps: make([]sample.Step, rows), drawn: make([]int, 0, rows)}
}

// bytes is the device memory of rows row blocks.
func (r *rowDraws) bytes(rows int) int64 {
	if r == nil {
		return 0
	}
	return align(int64(rows) * r.stride)
}

// StepSample runs rows and returns each row's token: a greedy row's the
// step's pick (plans.State.Picks), every other row's the plan's sampler's
// draw over its logits row with its settings, as a sequence's step draws
// (runtime.SamplingSequence); only ids come back. A plan without a GPU
// sampler brings the logits back and draws on the host.
func (b *Batch) StepSample(ctx context.Context, rows []runtime.BatchRow, draws []runtime.BatchDraw) ([]int32, error) {
	b.d.mu.Lock()
	defer b.d.mu.Unlock()
	if len(draws) != len(rows) {
		return nil, fmt.Errorf("cuda: %d draws for %d rows", len(draws), len(rows))
	}
	if err := b.run(ctx, rows); err != nil {
		return nil, err
	}
	n := len(rows)
	vocab := b.d.plan.Manifest.Model.Vocab
	pos := func(i int) int { return rows[i].Pos + len(rows[i].Tokens) }
	r := b.draws
	if r == nil {
		logits, err := b.logits(n)
		if err != nil {
			return nil, err
		}
		for i, dr := range draws {
			b.picks[i] = -1
			if dr.Sampler != nil {
				b.picks[i] = dr.Sampler.Sample(logits[i*vocab:(i+1)*vocab], dr.Recent, pos(i))
			}
		}
		return b.picks[:n], nil
	}
	r.drawn = r.drawn[:0]
	for i, dr := range draws {
		b.picks[i] = -1
		if dr.Sampler == nil {
			continue
		}
		r.steps[i] = dr.Sampler.Step(dr.Recent, pos(i), vocab)
		if !r.steps[i].Greedy() {
			r.drawn = append(r.drawn, i)
		}
	}
	if err := b.drawRows(n); err != nil {
		return nil, err
	}
	// The step's greedy picks (the copy waits for the draws too).
	st := &b.d.plan.Manifest.Kernels.State
	if err := b.d.g.copyDtoH(b.out[:8*n], devptr(b.reg.state+uint64(st.Picks))); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	keys := b.out[8*n:]
	for _, i := range r.drawn {
		if b.picks[i] = drawnID(le.Uint64(keys[8*i:])); b.picks[i] < 0 {
			return nil, fmt.Errorf("cuda: the sampler %s left no pick for row %d", b.d.sampling.k.Draw.Kernel, i)
		}
	}
	// Greedy rows: the step's pick, or where a row's logits are not all
	// finite the sampler's, which takes them by the greedy rule.
	r.drawn = r.drawn[:0]
	for i, dr := range draws {
		if dr.Sampler == nil || !r.steps[i].Greedy() {
			continue
		}
		if le.Uint32(b.out[8*i+4:]) != 0 {
			r.drawn = append(r.drawn, i)
			continue
		}
		b.picks[i] = int32(le.Uint32(b.out[8*i:]))
	}
	if len(r.drawn) == 0 {
		return b.picks[:n], nil
	}
	if err := b.drawRows(n); err != nil {
		return nil, err
	}
	if err := b.d.g.sync(); err != nil {
		return nil, err
	}
	for _, i := range r.drawn {
		if b.picks[i] = drawnID(le.Uint64(keys[8*i:])); b.picks[i] < 0 {
			return nil, fmt.Errorf("cuda: the sampler %s left no pick for row %d", b.d.sampling.k.Draw.Kernel, i)
		}
	}
	return b.picks[:n], nil
}

// drawnID is the token of a draw key; -1 for none (the sampler left 0).
func drawnID(key uint64) int32 {
	if key == 0 {
		return -1
	}
	return sample.KeyID(key)
}

// drawRows enqueues the draws of the rows r.drawn of a step of n rows with
// their settings r.steps: their windows written (settings, cleared picks),
// one sampler launch a row over its logits, and the n rows' draw keys
// copied back into b.out after the step's picks (8·n bytes on); d.mu is
// held and nothing of the host image is queued.
func (b *Batch) drawRows(n int) error {
	r, d := b.draws, b.d
	if len(r.drawn) == 0 {
		return nil
	}
	st := &d.plan.Manifest.Kernels.State
	for _, i := range r.drawn {
		w := r.host[int64(i)*r.window : int64(i+1)*r.window]
		clear(w[st.Greedy-r.lo : st.Greedy-r.lo+picksBytes])
		writeStep(w[st.Sample-r.lo:], &r.steps[i], false) // a row's block holds no head picks of its own
	}
	if err := d.g.copy2D(span2D{addr: r.states + uint64(r.lo), pitch: r.stride}, hostSpan(r.host, r.window), r.window, int64(n)); err != nil {
		return err
	}
	sp := d.sampling
	logits := b.reg.batch + uint64(d.plan.Manifest.Kernels.BatchLogits)
	vocab := uint64(d.plan.Manifest.Model.Vocab)
	for _, i := range r.drawn {
		args := []uint64{logits + 4*vocab*uint64(i), r.states + uint64(i)*uint64(r.stride), uint64(sp.scratch)}
		if err := d.g.launch(&batch{launches: []launchRec{sp.rec}, argv: args}); err != nil {
			return fmt.Errorf("cuda: sampling row %d: %w", i, err)
		}
	}
	key := span2D{addr: r.states + uint64(st.Greedy) + 16, pitch: r.stride}
	return d.g.copy2D(hostSpan(b.out[8*n:], 8), key, 8, int64(n))
}

package batching

import (
	"context"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/cpu"
)

// countingDevice is the CPU device whose batches record which path ran
// each step and what each hand-over to or from the solo sequence copied.
type countingDevice struct {
	*cpu.Device
	b *countingBatch
}

func (d *countingDevice) NewBatch(cfg runtime.BatchConfig) (runtime.Batch, error) {
	b, err := d.Device.NewBatch(cfg)
	if err != nil {
		return nil, err
	}
	d.b = &countingBatch{Batch: b.(*cpu.Batch)}
	return d.b, nil
}

// countingBatch counts batched steps (logits, greedy picks and draws) and
// solo steps, and records each LoadSolo's and StoreSolo's positions
// [from, to).
type countingBatch struct {
	*cpu.Batch
	steps, greedy, sampled int
	seq                    countingSeq
	loads, stores          [][2]int
}

type countingSeq struct {
	runtime.Sequence
	steps int
}

func (s *countingSeq) Forward(ctx context.Context, tokens []int32) ([]float32, error) {
	s.steps++
	return s.Sequence.Forward(ctx, tokens)
}

func (b *countingBatch) Step(ctx context.Context, rows []runtime.BatchRow) ([]float32, error) {
	b.steps++
	return b.Batch.Step(ctx, rows)
}

func (b *countingBatch) StepGreedy(ctx context.Context, rows []runtime.BatchRow) ([]int32, error) {
	b.greedy++
	return b.Batch.StepGreedy(ctx, rows)
}

func (b *countingBatch) StepSample(ctx context.Context, rows []runtime.BatchRow, draws []runtime.BatchDraw) ([]int32, error) {
	b.sampled++
	return b.Batch.StepSample(ctx, rows, draws)
}

func (b *countingBatch) Solo() runtime.Sequence {
	b.seq.Sequence = b.Batch.Solo()
	return &b.seq
}

func (b *countingBatch) LoadSolo(blocks []int32, from, to int) error {
	b.loads = append(b.loads, [2]int{from, to})
	return b.Batch.LoadSolo(blocks, from, to)
}

func (b *countingBatch) StoreSolo(blocks []int32, from, to int) error {
	b.stores = append(b.stores, [2]int{from, to})
	return b.Batch.StoreSolo(blocks, from, to)
}

// batched is how many batched steps ran.
func (b *countingBatch) batched() int { return b.steps + b.greedy + b.sampled }

package cpu

import (
	"context"
	"slices"
	"testing"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching/batchtest"
	"github.com/llama-orch/orc/runtime/sample"
)

// StepSample draws each row's token as its sampler does from Step's
// logits at the position after the row's tokens, -1 for a row without a
// sampler, and refuses draws that do not match the rows.
func TestStepSampleDrawsEachRow(t *testing.T) {
	dev, _ := openStories(t, 16)
	b, err := dev.NewBatch(runtime.BatchConfig{Sequences: 3, StepTokens: 24, BlockTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	vocab := dev.Info().Vocab
	seqs := batchtest.Sequences(3, vocab, b.Blocks())
	rows := make([]runtime.BatchRow, len(seqs))
	for i, s := range seqs {
		rows[i] = runtime.BatchRow{Tokens: s.Prompt, Blocks: s.Blocks}
	}
	ctx := context.Background()
	logits, err := b.Step(ctx, rows)
	if err != nil {
		t.Fatal(err)
	}
	logits = slices.Clone(logits)
	samplers := []*sample.Sampler{
		sample.New(sample.Params{Temperature: 1, Seed: 3}),
		nil,
		sample.New(sample.Params{Temperature: 0.7, TopP: 0.9, RepetitionPenalty: 1.3, Seed: 5}),
	}
	draws := make([]runtime.BatchDraw, len(rows))
	want := make([]int32, len(rows))
	for i, sm := range samplers {
		want[i] = -1
		if sm != nil {
			draws[i] = runtime.BatchDraw{Sampler: sm, Recent: seqs[i].Prompt}
			want[i] = sm.Sample(logits[i*vocab:(i+1)*vocab], seqs[i].Prompt, len(seqs[i].Prompt))
		}
	}
	got, err := b.(runtime.BatchSampler).StepSample(ctx, rows, draws)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("StepSample drew %v, the samplers over Step's logits %v", got, want)
	}
	if _, err := b.(runtime.BatchSampler).StepSample(ctx, rows, draws[:2]); err == nil {
		t.Error("two draws for three rows were taken")
	}
}

package cuda_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching/batchtest"
	"github.com/llama-orch/orc/runtime/sample"
)

// TestGPUStepSampleDrawsAsTheHost (runtime/cuda's BatchSampler): over
// eight steps of five rows (greedy; temperature 1; 0.7 with top_p 0.9;
// top_k 40 with penalties and min_p; one row mid-prompt, which draws
// nothing), StepSample's ids are the ones the CPU sampler draws from
// Step's logits of the same rows (the step run twice writes the same keys
// and values), though only ids come back.
func TestGPUStepSampleDrawsAsTheHost(t *testing.T) {
	gpuOnly(t)
	c := agreeConfig{preset: "qwen2.5-0.5b-tiny", quant: synth.QuantQ4KM}
	model := filepath.Join(t.TempDir(), c.String()+".gguf")
	c.write(t, model)
	g, man, f := lowerGPU(t, model, batchMaxTokens)
	gdev := openGPUPlan(t, g, man, batchCtx, ggufData(f))
	vocab := gdev.Info().Vocab
	b := newTestBatch(t, gdev, int64(batchSeqs*batchCtx/batchBlock+1)*kvBlockBytes(man))
	bs, ok := b.(runtime.BatchSampler)
	if !ok {
		t.Fatal("the CUDA batch does not draw")
	}
	settings := []sample.Params{
		{},
		{Temperature: 1, Seed: 1},
		{Temperature: 0.7, TopP: 0.9, Seed: 2},
		{Temperature: 0.8, TopK: 40, MinP: 0.02, RepetitionPenalty: 1.3, PresencePenalty: 0.5, FrequencyPenalty: 0.2, Seed: 3},
		{Temperature: 1, Seed: 4}, // mid-prompt throughout
	}
	seqs := batchtest.Sequences(len(settings), vocab, b.Blocks())
	history := make([][]int32, len(seqs))
	rows := make([]runtime.BatchRow, len(seqs))
	for i, s := range seqs {
		history[i] = slices.Clone(s.Prompt)
		rows[i] = runtime.BatchRow{Tokens: s.Prompt, Blocks: s.Blocks}
	}
	long := seqs[len(seqs)-1].Prompt // fed a token a step, never finished
	rows[len(rows)-1].Tokens = long[:1]
	ctx := context.Background()
	for step := range 8 {
		logits, err := b.Step(ctx, rows)
		if err != nil {
			t.Fatal(err)
		}
		logits = slices.Clone(logits)
		draws := make([]runtime.BatchDraw, len(rows))
		want := make([]int32, len(rows))
		for i, p := range settings {
			want[i] = -1
			if i == len(rows)-1 {
				continue
			}
			recent := history[i][max(0, len(history[i])-sample.PenaltyWindow):]
			draws[i] = runtime.BatchDraw{Sampler: sample.New(p), Recent: recent}
			want[i] = draws[i].Sampler.Sample(logits[i*vocab:(i+1)*vocab], recent, rows[i].Pos+len(rows[i].Tokens))
		}
		got, err := bs.StepSample(ctx, rows, draws)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: StepSample drew %v, the host from Step's logits %v", step, got, want)
		}
		for i := range rows {
			rows[i].Pos += len(rows[i].Tokens)
			if i == len(rows)-1 {
				rows[i].Tokens = long[rows[i].Pos : rows[i].Pos+1]
				continue
			}
			history[i] = append(history[i], got[i])
			rows[i].Tokens = history[i][len(history[i])-1:]
		}
	}
}

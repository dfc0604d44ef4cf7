package cpu

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching/batchtest"
)

// Rows batched together give bit for bit the logits each gives alone,
// whatever the step's other rows and however its prompt is chunked, and
// those logits are the single-sequence Forward's to float32 rounding.
// An 8-bit KV cache (name/q8) holds them too.
func TestBatchRowsMatchAlone(t *testing.T) {
	for _, name := range []string{"stories", "qwen2.5-0.5b-tiny", "gpt2-small-tiny", "gpt-oss-20b-tiny", "qwen3-30b-a3b-tiny",
		"qwen2.5-0.5b-tiny/q8", "gpt-oss-20b-tiny/q8", "qwen3-tiny/q8"} {
		t.Run(name, func(t *testing.T) {
			var dev *Device
			preset, kv, _ := strings.Cut(name, "/")
			if name == "stories" {
				dev, _ = openStories(t, 16)
			} else {
				dev = openTinyKV(t, preset, 16, kv)
			}
			const nSeq, steps, bt = 5, 6, 4
			b, err := dev.NewBatch(runtime.BatchConfig{Sequences: nSeq, StepTokens: 24, BlockTokens: bt})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			vocab := dev.Info().Vocab
			seqs := batchtest.Sequences(nSeq, vocab, b.Blocks())
			alone, err := batchtest.Alone(b, vocab, seqs, steps, 24)
			if err != nil {
				t.Fatal(err)
			}
			// Together: prompts chunked 1..4 tokens a step, so prefills
			// and decodes share steps.
			if err := batchtest.Run(b, vocab, seqs, steps, func(i, step int) int { return 1 + (i+step)%4 }); err != nil {
				t.Fatal(err)
			}
			for i, s := range seqs {
				for k := range steps {
					if !slices.Equal(s.Logits[k], alone[i][k]) {
						t.Fatalf("sequence %d, step %d: batched logits differ from the sequence alone", i, k)
					}
				}
			}
			// The batched step computes what Forward computes.
			for i, s := range seqs {
				seq, err := dev.NewSequence(64)
				if err != nil {
					t.Fatal(err)
				}
				var want []float32
				for c := 0; c < len(s.Prompt); c += 16 {
					if want, err = seq.Forward(context.Background(), s.Prompt[c:min(c+16, len(s.Prompt))]); err != nil {
						t.Fatal(err)
					}
				}
				seq.Close()
				if e := batchtest.Error(alone[i][0], want); e > 1e-4 {
					t.Errorf("sequence %d: batched logits differ from Forward's by %.3g of their range", i, e)
				}
			}
		})
	}
}

func TestBatchRefusesRowsOutsideItsLimits(t *testing.T) {
	dev, _ := openStories(t, 16)
	perBlock := int64(4 * 5 * 2 * 32 * 4) // 4 tokens, 5 layers, k and v, 4 kv heads of 8, float32
	b, err := dev.NewBatch(runtime.BatchConfig{Sequences: 2, StepTokens: 8, BlockTokens: 4, KVBytes: 3*perBlock + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Blocks() != 3 || b.KVBytesPerBlock() != perBlock {
		t.Fatalf("%d blocks of %d bytes; want 3 of %d", b.Blocks(), b.KVBytesPerBlock(), perBlock)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		rows []runtime.BatchRow
	}{
		{"no rows", nil},
		{"three rows", []runtime.BatchRow{{Tokens: []int32{1}, Blocks: []int32{0}}, {Tokens: []int32{1}, Blocks: []int32{1}}, {Tokens: []int32{1}, Blocks: []int32{2}}}},
		{"nine tokens", []runtime.BatchRow{{Tokens: make([]int32, 9), Blocks: []int32{0, 1, 2}}}},
		{"past its blocks", []runtime.BatchRow{{Tokens: []int32{1, 2}, Pos: 3, Blocks: []int32{0}}}},
		{"block outside the pool", []runtime.BatchRow{{Tokens: []int32{1}, Blocks: []int32{3}}}},
		{"empty row", []runtime.BatchRow{{Blocks: []int32{0}}}},
	} {
		if _, err := b.Step(ctx, tc.rows); !errors.Is(err, runtime.ErrBatchRows) {
			t.Errorf("%s: got %v, want ErrBatchRows", tc.name, err)
		}
	}
	if _, err := b.Step(ctx, []runtime.BatchRow{{Tokens: []int32{1, 2, 3, 4, 5}, Blocks: []int32{2, 0}}}); err != nil {
		t.Errorf("a valid row: %v", err)
	}
	if _, err := dev.NewBatch(runtime.BatchConfig{Sequences: 2, StepTokens: 8, BlockTokens: 4, KVBytes: 100}); err == nil {
		t.Error("a pool of 100 bytes was accepted")
	}
}

package cpu

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching/batchtest"
)

// The solo sequence's logits are the batched step's bit for bit, and a
// sequence handed from one to the other mid-generation (its positions
// stored from the solo cache into its blocks, the batch's loaded back)
// goes on with exactly the logits of one that stays in the batch.
func TestSoloMatchesTheBatchedStep(t *testing.T) {
	for _, name := range []string{"stories", "qwen2.5-0.5b-tiny"} {
		t.Run(name, func(t *testing.T) {
			var dev *Device
			if name == "stories" {
				dev, _ = openStories(t, 16)
			} else {
				dev = openTiny(t, name, 16)
			}
			const steps, bt = 9, 4
			b, err := dev.NewBatch(runtime.BatchConfig{Sequences: 2, StepTokens: 16, BlockTokens: bt, Solo: true})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			sb := b.(runtime.SoloBatch)
			vocab := dev.Info().Vocab
			seqs := batchtest.Sequences(2, vocab, b.Blocks())
			s, other := seqs[1], seqs[0].Blocks // an 8-token prompt; blocks of its own for the hand-over
			alone, err := batchtest.Alone(b, vocab, []*batchtest.Seq{s}, steps, 16)
			if err != nil {
				t.Fatal(err)
			}
			want := alone[0]
			ids := batchtest.Greedy(want)
			ctx := context.Background()
			solo := sb.Solo()
			if err := sb.LoadSolo(other, 0, 0); err != nil {
				t.Fatal(err)
			}
			tokens, pos := s.Prompt, 0
			for k := range steps {
				var logits []float32
				switch {
				case k < 3 || k >= 6: // solo
					if k == 6 {
						if err := sb.LoadSolo(other, solo.Pos(), pos); err != nil {
							t.Fatal(err)
						}
					}
					logits, err = solo.Forward(ctx, tokens)
				default: // batched, beside nothing else
					if k == 3 {
						if err := sb.StoreSolo(other, 0, pos); err != nil {
							t.Fatal(err)
						}
					}
					logits, err = b.Step(ctx, []runtime.BatchRow{{Tokens: tokens, Pos: pos, Blocks: other}})
				}
				if err != nil {
					t.Fatalf("step %d: %v", k, err)
				}
				if !slices.Equal(logits[:vocab], want[k]) {
					t.Fatalf("step %d: logits differ from the batched step's", k)
				}
				pos += len(tokens)
				tokens = []int32{ids[k]}
			}
			if solo.Pos() != pos {
				t.Errorf("the solo sequence holds %d positions, want %d", solo.Pos(), pos)
			}
		})
	}
}

// Copies between the solo sequence and the pool outside either, and a
// batch without a solo sequence, are refused.
func TestSoloRefusesCopiesOutsideItsCache(t *testing.T) {
	dev, _ := openStories(t, 16)
	b, err := dev.NewBatch(runtime.BatchConfig{Sequences: 2, StepTokens: 8, BlockTokens: 4, Solo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sb := b.(runtime.SoloBatch)
	blocks := []int32{0, 1}
	if err := sb.LoadSolo(blocks, 0, 5); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"load past the solo's positions", sb.LoadSolo(blocks, 6, 7)},
		{"load past the blocks", sb.LoadSolo(blocks, 5, 9)},
		{"store past the solo's positions", sb.StoreSolo(blocks, 0, 6)},
		{"block outside the pool", sb.StoreSolo([]int32{0, int32(b.Blocks())}, 0, 5)},
		{"backwards", sb.StoreSolo(blocks, 3, 2)},
	} {
		if !errors.Is(tc.err, runtime.ErrBatchRows) {
			t.Errorf("%s: %v, want ErrBatchRows", tc.name, tc.err)
		}
	}
	plain, err := dev.NewBatch(runtime.BatchConfig{Sequences: 2, StepTokens: 8, BlockTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if s := plain.(runtime.SoloBatch); s.Solo() != nil || s.LoadSolo(blocks, 0, 0) == nil {
		t.Error("a batch made without Solo has a solo sequence")
	}
}

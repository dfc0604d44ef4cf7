package cpu

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
)

// batchSeq is one sequence a test feeds through a Batch: its prompt, then
// its greedy tokens, in its own blocks.
type batchSeq struct {
	prompt []int32
	blocks []int32
	fed    []int32     // tokens in the cache
	next   []int32     // tokens to feed next
	logits [][]float32 // after the prompt, then after each decode step
}

// stepAll feeds the sequences through b until each has steps logits rows
// after its prompt: each step takes from every unfinished sequence its
// decode token, or the next chunk(i, step) tokens of its prompt; greedy
// picks are fed back.
func stepAll(t *testing.T, b runtime.Batch, vocab int, seqs []*batchSeq, steps int, chunk func(i, step int) int) {
	t.Helper()
	greedy := sample.New(sample.Params{})
	for _, s := range seqs {
		s.fed, s.next, s.logits = nil, slices.Clone(s.prompt), nil
	}
	for step := 0; ; step++ {
		var rows []runtime.BatchRow
		var who []*batchSeq
		for i, s := range seqs {
			if len(s.logits) == steps {
				continue
			}
			n := min(len(s.next), max(1, chunk(i, step)))
			rows = append(rows, runtime.BatchRow{Tokens: s.next[:n], Pos: len(s.fed), Blocks: s.blocks})
			who = append(who, s)
		}
		if len(rows) == 0 {
			return
		}
		out, err := b.Step(context.Background(), rows)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range who {
			n := len(rows[i].Tokens)
			s.fed = append(s.fed, s.next[:n]...)
			s.next = s.next[n:]
			if len(s.next) > 0 {
				continue // mid-prompt: these logits are not used
			}
			row := slices.Clone(out[i*vocab : (i+1)*vocab])
			s.logits = append(s.logits, row)
			s.next = []int32{greedy.Sample(row, nil, 0)}
		}
	}
}

// Rows batched together give bit for bit the logits each gives alone,
// whatever the step's other rows and however its prompt is chunked, and
// those logits are the single-sequence Forward's to float32 rounding.
func TestBatchRowsMatchAlone(t *testing.T) {
	for _, name := range []string{"stories", "qwen2.5-0.5b-tiny", "gpt2-small-tiny", "gpt-oss-20b-tiny"} {
		t.Run(name, func(t *testing.T) {
			var dev *Device
			if name == "stories" {
				dev, _ = openStories(t, 16)
			} else {
				dev = openTiny(t, name, 16)
			}
			const nSeq, steps, bt = 5, 6, 4
			b, err := dev.NewBatch(runtime.BatchConfig{Sequences: nSeq, StepTokens: 24, BlockTokens: bt})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			vocab := dev.Info().Vocab
			seqs := make([]*batchSeq, nSeq)
			perSeq := b.Blocks() / nSeq
			for i := range seqs {
				prompt := make([]int32, 3+5*i) // 3 … 23 tokens
				for j := range prompt {
					prompt[j] = int32((11 + 7919*j + 104729*i) % vocab)
				}
				// Blocks interleaved across sequences, in no particular order.
				blocks := make([]int32, perSeq)
				for j := range blocks {
					blocks[j] = int32((perSeq-1-j)*nSeq + i)
				}
				seqs[i] = &batchSeq{prompt: prompt, blocks: blocks}
			}
			alone := make([][][]float32, nSeq)
			for i, s := range seqs {
				stepAll(t, b, vocab, []*batchSeq{s}, steps, func(int, int) int { return 24 })
				alone[i] = s.logits
			}
			// Together: prompts chunked 1..4 tokens a step, so prefills
			// and decodes share steps.
			stepAll(t, b, vocab, seqs, steps, func(i, step int) int { return 1 + (i+step)%4 })
			for i, s := range seqs {
				for k := range steps {
					if !slices.Equal(s.logits[k], alone[i][k]) {
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
				for c := 0; c < len(s.prompt); c += 16 {
					if want, err = seq.Forward(context.Background(), s.prompt[c:min(c+16, len(s.prompt))]); err != nil {
						t.Fatal(err)
					}
				}
				scale, worst := 0.0, 0.0
				for j, v := range want {
					scale = max(scale, math.Abs(float64(v)))
					worst = max(worst, math.Abs(float64(v-alone[i][0][j])))
				}
				seq.Close()
				if worst > 1e-4*scale {
					t.Errorf("sequence %d: batched logits differ from Forward's by %.3g (scale %.3g)", i, worst, scale)
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

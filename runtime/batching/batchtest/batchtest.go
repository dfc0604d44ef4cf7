// Package batchtest holds what the batched-step tests of every device
// share: sequences fed through a runtime.Batch alone and together (prompt
// chunks beside other rows' decode tokens, greedy tokens fed back), to
// compare each row's logits with the sequence's alone (the CPU device: bit
// for bit; a GPU: within its tolerance) and with Forward.
package batchtest

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
)

// Seq is one sequence fed through a Batch: its prompt, then its greedy
// tokens, in its own blocks.
type Seq struct {
	Prompt []int32
	Blocks []int32
	// Cached is how many prompt positions its blocks hold already (a
	// shared prefix): Run feeds the prompt from there.
	Cached int
	// Feed, when set, are the decode tokens fed after each logits row
	// instead of the row's greedy pick: another device's picks, so that
	// both devices see the same tokens.
	Feed []int32
	// Logits are the rows after the prompt, then after each decode step.
	Logits [][]float32
}

// Sequences makes n sequences with prompts of 3, 8, 13, … tokens (ids
// spread over vocab), each with blocks/n of the pool's blocks, interleaved
// across sequences and in descending order, so that no row's blocks are
// contiguous.
func Sequences(n, vocab, blocks int) []*Seq {
	seqs := make([]*Seq, n)
	per := blocks / n
	for i := range seqs {
		prompt := make([]int32, 3+5*i)
		for j := range prompt {
			prompt[j] = int32((11 + 7919*j + 104729*i) % vocab)
		}
		table := make([]int32, per)
		for j := range table {
			table[j] = int32((per-1-j)*n + i)
		}
		seqs[i] = &Seq{Prompt: prompt, Blocks: table}
	}
	return seqs
}

// Run feeds seqs through b until each has steps rows of logits: every step
// takes from each unfinished sequence its decode token, or the next
// chunk(i, step) tokens (at least 1) of its prompt past Cached; greedy
// picks (or Feed) are fed back.
func Run(b runtime.Batch, vocab int, seqs []*Seq, steps int, chunk func(i, step int) int) error {
	greedy := sample.New(sample.Params{})
	fed := make([]int, len(seqs))
	next := make([][]int32, len(seqs))
	for i, s := range seqs {
		fed[i], next[i], s.Logits = s.Cached, slices.Clone(s.Prompt[s.Cached:]), nil
	}
	for step := 0; ; step++ {
		var rows []runtime.BatchRow
		var who []int
		for i, s := range seqs {
			if len(s.Logits) == steps {
				continue
			}
			n := min(len(next[i]), max(1, chunk(i, step)))
			rows = append(rows, runtime.BatchRow{Tokens: next[i][:n], Pos: fed[i], Blocks: s.Blocks})
			who = append(who, i)
		}
		if len(rows) == 0 {
			return nil
		}
		out, err := b.Step(context.Background(), rows)
		if err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
		for r, i := range who {
			n := len(rows[r].Tokens)
			fed[i] += n
			next[i] = next[i][n:]
			if len(next[i]) > 0 {
				continue // mid-prompt: these logits are not used
			}
			row := slices.Clone(out[r*vocab : (r+1)*vocab])
			id := greedy.Sample(row, nil, 0)
			if k := len(seqs[i].Logits); k < len(seqs[i].Feed) {
				id = seqs[i].Feed[k]
			}
			seqs[i].Logits = append(seqs[i].Logits, row)
			next[i] = []int32{id}
		}
	}
}

// Alone runs each sequence by itself (its prompt in one step of up to
// stepTokens) and returns each one's logits rows.
func Alone(b runtime.Batch, vocab int, seqs []*Seq, steps, stepTokens int) ([][][]float32, error) {
	alone := make([][][]float32, len(seqs))
	for i, s := range seqs {
		if err := Run(b, vocab, []*Seq{s}, steps, func(int, int) int { return stepTokens }); err != nil {
			return nil, err
		}
		alone[i] = s.Logits
	}
	return alone, nil
}

// Error is the largest |got − want| over a row, relative to the row's
// largest |want|.
func Error(got, want []float32) float64 {
	worst, scale := 0.0, 0.0
	for i, w := range want {
		scale = max(scale, math.Abs(float64(w)))
		worst = max(worst, math.Abs(float64(got[i]-w)))
	}
	return worst / max(scale, math.SmallestNonzeroFloat64)
}

// Greedy is each row's greedy pick, by the sampler's rule.
func Greedy(rows [][]float32) []int32 {
	greedy := sample.New(sample.Params{})
	ids := make([]int32, len(rows))
	for i, r := range rows {
		ids[i] = greedy.Sample(r, nil, 0)
	}
	return ids
}

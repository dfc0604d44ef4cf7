package cuda_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching/batchtest"
	"github.com/llama-orch/orc/runtime/cpu"
)

// The batched step's GPU acceptance (codegen/cuda/batch.go, runtime/cuda's
// Batch): 16 sequences of prompts of 3 to 78 tokens, chunked 1 to 4
// tokens a step beside the others' decode tokens, for 64 decode steps.
const (
	batchSeqs      = 16
	batchSteps     = 1 + agreeSteps // the row after the prompt, then the decode steps'
	batchMaxTokens = 64             // the plans' max_tokens: a step's tokens
	batchCtx       = 256            // ≥ 78 + 64
	batchBlock     = 16
)

var batchConfigs = func() []agreeConfig {
	var cs []agreeConfig
	for _, p := range []string{"llama-tiny", "qwen2.5-0.5b-tiny", "phi-3-mini-4k-tiny", "gpt-oss-20b-tiny", "qwen3-tiny", "gemma-3-tiny"} {
		for _, q := range []synth.Quant{synth.QuantF16, synth.QuantQ4KM} {
			cs = append(cs, agreeConfig{preset: p, quant: q})
		}
	}
	// gpt-oss in its own experts' type; Qwen3-MoE's K-quant experts, 4 of
	// 16 a token, through the batched decode step's expert products too.
	cs = append(cs, agreeConfig{preset: "gpt-oss-20b-tiny", quant: synth.QuantMXFP4}, agreeConfig{preset: "qwen3-30b-a3b-tiny", quant: synth.QuantQ4KM})
	// An 8-bit KV cache on both devices (kvQ8Tolerance).
	for _, p := range []string{"qwen2.5-0.5b-tiny", "phi-3-mini-4k-tiny", "gpt-oss-20b-tiny"} {
		cs = append(cs, agreeConfig{preset: p, quant: synth.QuantQ4KM, kv: plans.KVCacheQ8})
	}
	// Real widths, where the batched step's matrix kernels stream (at least
	// a weight tile an SM: mma_tokens' mmat_stream): minutes of CPU
	// device time, so with ORC_GPU_FULL=1 only.
	if os.Getenv("ORC_GPU_FULL") == "1" {
		cs = append(cs, agreeConfig{preset: "phi-3-mini-4k", quant: synth.QuantQ4KM, layers: 2})
	}
	// ORC_BATCH_ONLY=name,...: only those configs (their String()).
	if only := os.Getenv("ORC_BATCH_ONLY"); only != "" {
		cs = slices.DeleteFunc(cs, func(c agreeConfig) bool { return !slices.Contains(strings.Split(only, ","), c.String()) })
	}
	return cs
}()

func batchChunk(i, step int) int { return 1 + (i+step)%4 }

// TestGPUBatchMatchesCPU: per config, (1) the GPU's batched step fed the
// CPU batched step's tokens gives every row within agreeTolerance (an
// 8-bit cache: kvQ8Tolerance) of the CPU's, the CPU's MoE routings of
// margin below it turned
// where a row needs it (batchtest.ExplainByTurns: qwen3-30b-a3b-tiny's
// router ties to 1e-5 of its logits, and one token's expert turned moves
// rows by up to 1.6e-1), with its argmax on 99 % of the rows; (2) fed its
// own greedy picks, each sequence's 65 greedy ids equal those of the
// sequence alone on the GPU's prefill and decode schedules up to a step
// where the alone logits near-tie or where the CPU device shows a routing
// near-tie turned between the two (batchtest.ExplainParting); (3)
// StepGreedy's picks equal the greedy picks of Step's logits; (4) a
// sequence whose table starts with another's two prompt blocks,
// prefilling only the rest, gives the ids of its cold run.
func TestGPUBatchMatchesCPU(t *testing.T) {
	gpuOnly(t)
	dir := t.TempDir()
	names := make([]string, len(batchConfigs))
	for i, c := range batchConfigs {
		names[i] = c.String()
	}
	if !inParallel(t, names, func(t *testing.T, i int) {
		model := filepath.Join(dir, names[i]+".gguf")
		batchConfigs[i].write(t, model)
		buildGPUKV(t, model, batchMaxTokens, batchConfigs[i].kv)
	}) {
		t.FailNow()
	}
	var agreeAll, rowsAll int
	for i := range batchConfigs {
		t.Run(names[i], func(t *testing.T) {
			model := filepath.Join(dir, names[i]+".gguf")
			c := batchConfigs[i]
			bound := c.tolerance()
			turns := &batchtest.Turns{Bound: bound}
			cdev := openCPUKV(t, model, batchMaxTokens, c.kv, cpu.Options{Route: func(r *cpu.Routing) { turns.Route(r.MoE, r.Pos, r.Margin(), r.Turn) }})
			g, man, f := lowerForKV(t, model, batchMaxTokens, cuda.DefaultArch, c.kv)
			gdev := openGPUPlan(t, g, man, batchCtx, ggufData(f))
			vocab := gdev.Info().Vocab
			cpuB := newTestBatch(t, cdev, 0)
			gpuB := newTestBatch(t, gdev, int64(batchSeqs*batchCtx/batchBlock+1)*kvBlockBytes(man)) // and the block the batch reserves

			// (1) The same tokens on both devices.
			cseqs := batchtest.Sequences(batchSeqs, vocab, cpuB.Blocks())
			if err := batchtest.Run(cpuB, vocab, cseqs, batchSteps, batchChunk); err != nil {
				t.Fatal(err)
			}
			gseqs := batchtest.Sequences(batchSeqs, vocab, gpuB.Blocks())
			for k, s := range gseqs {
				s.Feed = batchtest.Greedy(cseqs[k].Logits)
			}
			shapes := &stepShapes{Batch: gpuB, decodeRows: map[int]bool{}}
			if err := batchtest.Run(shapes, vocab, gseqs, batchSteps, batchChunk); err != nil {
				t.Fatal(err)
			}
			// The sequences' prompts end at distinct steps, so their
			// decode-only steps take every row count from 16 down to 1:
			// through the batched decode schedule where the plan has one.
			for n := 1; n <= batchSeqs; n++ {
				if !shapes.decodeRows[n] {
					t.Errorf("no decode-only step of %d rows ran", n)
				}
			}
			out, err := cuda.Generate(g, man, cuda.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if dr, q := out.Kernels.BatchDecodeMaxRows, batchConfigs[i].quant; (q != synth.QuantF16) != (dr >= batchSeqs) {
				t.Errorf("a %s plan's batched decode step takes %d rows", q, dr)
			}
			worst, worstSeq, worstRow, agree := 0.0, 0, 0, 0
			var outside []int // sequences with a row outside bound
			for k, s := range gseqs {
				for r, row := range s.Logits {
					e := relErr(row, cseqs[k].Logits[r])
					if e > worst {
						worst, worstSeq, worstRow = e, k, r
					}
					if e > bound && !slices.Contains(outside, k) {
						outside = append(outside, k)
					}
					if argmax(row) == argmax(cseqs[k].Logits[r]) {
						agree++
					}
				}
			}
			agreeAll, rowsAll = agreeAll+agree, rowsAll+batchSeqs*batchSteps
			t.Logf("%-26s batched max|gpu-cpu|/max|cpu| %.2e (bound %.0e; sequence %d, row %d)  top-1 %d/%d", names[i], worst, bound, worstSeq, worstRow, agree, batchSeqs*batchSteps)
			for _, k := range outside {
				turned, err := batchtest.ExplainByTurns(cpuB, vocab, batchMaxTokens, gseqs[k], cseqs[k].Blocks, turns, bound)
				if err != nil {
					t.Errorf("sequence %d (prompt %d tokens): %v", k, len(gseqs[k].Prompt), err)
					continue
				}
				t.Logf("sequence %d: every row within %.0e of the CPU device's with the routings of %v turned", k, bound, turned)
			}

			// (2) Its own picks, against each sequence alone on the
			// ordinary schedules.
			for _, s := range gseqs {
				s.Feed = nil
			}
			if err := batchtest.Run(gpuB, vocab, gseqs, batchSteps, batchChunk); err != nil {
				t.Fatal(err)
			}
			// Free-running greedy runs part at the first near-tie, of the
			// logits or of a MoE routing; up to it the ids must be equal,
			// and the step they part at must be one: a near-tie of the alone
			// logits, or else a routing near-tie the two schedules' sums
			// turned (batchtest.ExplainParting: each run's rows are the CPU
			// device's with near-tie routings turned, different ones, and
			// the CPU device so turned picks each run's id).
			for k, s := range gseqs {
				got := batchtest.Greedy(s.Logits)
				want, wantRows := aloneGreedy(t, gdev, s.Prompt, batchSteps)
				for j := range want {
					if got[j] == want[j] {
						continue
					}
					if batchtest.NearTie(wantRows[j], got[j], want[j], bound) {
						t.Logf("sequence %d: batched and alone part at step %d of %d, a near-tie", k, j, len(want))
						break
					}
					p, err := batchtest.ExplainParting(cpuB, vocab, batchMaxTokens, s.Prompt, cseqs[k].Blocks, s.Logits, wantRows, turns, bound)
					if err != nil {
						t.Errorf("sequence %d (prompt %d tokens), step %d: batched greedy id %d, alone %d, not a near-tie of the alone logits nor a routing turned between them: %v\nbatched %v\nalone   %v",
							k, len(s.Prompt), j, got[j], want[j], err, got, want)
					} else {
						t.Logf("sequence %d: batched and alone part at step %d of %d, a routing near-tie turned between them (the CPU device turns %v for the batched run, %v for the alone)", k, j, len(want), p.A, p.C)
					}
					break
				}
			}

			// (3) The device's picks are Step's logits' picks.
			rows := make([]runtime.BatchRow, 0, batchSeqs)
			for _, s := range gseqs {
				rows = append(rows, runtime.BatchRow{Tokens: s.Prompt[:1], Pos: 0, Blocks: s.Blocks})
			}
			logits, err := gpuB.Step(context.Background(), rows)
			if err != nil {
				t.Fatal(err)
			}
			want := make([][]float32, len(rows))
			for r := range rows {
				want[r] = slices.Clone(logits[r*vocab : (r+1)*vocab])
			}
			picks, err := gpuB.(runtime.BatchPicker).StepGreedy(context.Background(), rows)
			if err != nil {
				t.Fatal(err)
			}
			if w := batchtest.Greedy(want); !slices.Equal(picks, w) {
				t.Errorf("StepGreedy picked %v, Step's logits %v", picks, w)
			}

			// (4) A prefix shared through the block table.
			a, b := gseqs[15], gseqs[14]
			shared := 2 * batchBlock
			prompt := append(slices.Clone(a.Prompt[:shared]), b.Prompt...)
			cold := &batchtest.Seq{Prompt: prompt, Blocks: b.Blocks}
			if err := batchtest.Run(gpuB, vocab, []*batchtest.Seq{a, cold}, batchSteps, batchChunk); err != nil {
				t.Fatal(err)
			}
			warm := &batchtest.Seq{Prompt: prompt, Blocks: append(slices.Clone(a.Blocks[:2]), b.Blocks[:len(b.Blocks)-2]...), Cached: shared}
			if err := batchtest.Run(gpuB, vocab, []*batchtest.Seq{warm}, batchSteps, batchChunk); err != nil {
				t.Fatal(err)
			}
			if c, w := batchtest.Greedy(cold.Logits), batchtest.Greedy(warm.Logits); !slices.Equal(c, w) {
				t.Errorf("with a shared prefix of %d tokens: greedy ids %v, cold %v", shared, w, c)
			}
		})
	}
	if float64(agreeAll) < agreeTop1*float64(rowsAll) {
		t.Errorf("batched top-1 agreement %d/%d is below %.0f %%", agreeAll, rowsAll, 100*agreeTop1)
	}
}

// newTestBatch is a batch of batchSeqs rows of up to batchMaxTokens
// tokens in blocks of batchBlock, its pool kvBytes (0: the device's
// default).
func newTestBatch(t *testing.T, dev runtime.BatchDevice, kvBytes int64) runtime.Batch {
	t.Helper()
	b, err := dev.NewBatch(runtime.BatchConfig{Sequences: batchSeqs, StepTokens: batchMaxTokens, BlockTokens: batchBlock, KVBytes: kvBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// kvBlockBytes is a KV block's bytes on the GPU: keys and values of every
// layer in the plan's cache format.
func kvBlockBytes(m *plans.Manifest) int64 {
	return m.Model.KVBytes(batchBlock)
}

// aloneGreedy is the greedy ids of prompt run alone on dev's prefill and
// decode schedules: the pick after the prompt, then after each of steps−1
// decode steps.
func aloneGreedy(t *testing.T, dev runtime.Device, prompt []int32, steps int) ([]int32, [][]float32) {
	t.Helper()
	seq, err := dev.NewSequence(batchCtx)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	var ids []int32
	var rows [][]float32
	in := prompt
	for range steps {
		row, err := seq.Forward(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, slices.Clone(row))
		ids = append(ids, batchtest.Greedy([][]float32{row})...)
		in = ids[len(ids)-1:]
	}
	return ids, rows
}

// stepShapes is a Batch that records the row counts of the decode-only
// steps (every row one token) run through it.
type stepShapes struct {
	runtime.Batch
	decodeRows map[int]bool
}

func (s *stepShapes) Step(ctx context.Context, rows []runtime.BatchRow) ([]float32, error) {
	if !slices.ContainsFunc(rows, func(r runtime.BatchRow) bool { return len(r.Tokens) != 1 }) {
		s.decodeRows[len(rows)] = true
	}
	return s.Batch.Step(ctx, rows)
}

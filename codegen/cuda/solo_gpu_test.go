package cuda_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching"
	"github.com/llama-orch/orc/runtime/batching/batchtest"
)

// soloTolerance bounds a solo decode's logits against a fresh sequence's
// after the same tokens: the same kernels over the same keys and values,
// so only a reduction's order may differ.
const soloTolerance = 1e-5

// TestGPUSoloHandOver (runtime/cuda's SoloBatch, the batching scheduler's
// lone sequence): (1) the solo sequence given back a prompt's keys and
// values through the pool (stored from its cache into non-contiguous
// blocks, its cache overwritten by a longer prompt, loaded back) decodes
// what a fresh sequence decodes after that prompt, within soloTolerance:
// the 2D copies put every position where the decode graph reads it; (2)
// through the scheduler, a greedy request that runs alone, then beside a
// second one, then alone again gives the ids it gives alone up to a near
// tie, and so does the second. Phi-3's tiny preset with an 8-bit cache
// too (its rows copied whole, codes and scales).
func TestGPUSoloHandOver(t *testing.T) {
	gpuOnly(t)
	configs := []agreeConfig{{preset: "qwen2.5-0.5b-tiny", quant: synth.QuantQ4KM}, {preset: "phi-3-mini-4k-tiny", quant: synth.QuantQ4KM},
		{preset: "gpt-oss-20b-tiny", quant: synth.QuantMXFP4}, {preset: "phi-3-mini-4k-tiny", quant: synth.QuantQ4KM, kv: plans.KVCacheQ8}}
	dir := t.TempDir()
	names := make([]string, len(configs))
	for i, c := range configs {
		names[i] = c.String()
	}
	if !inParallel(t, names, func(t *testing.T, i int) {
		model := filepath.Join(dir, names[i]+".gguf")
		configs[i].write(t, model)
		buildGPUKV(t, model, batchMaxTokens, configs[i].kv)
	}) {
		t.FailNow()
	}
	for i := range configs {
		t.Run(names[i], func(t *testing.T) {
			model := filepath.Join(dir, names[i]+".gguf")
			g, man, f := lowerForKV(t, model, batchMaxTokens, cuda.DefaultArch, configs[i].kv)
			gdev := openGPUPlan(t, g, man, batchCtx, ggufData(f))
			vocab := gdev.Info().Vocab
			prompt := func(n, salt int) []int32 {
				p := make([]int32, n)
				for j := range p {
					p[j] = int32((11 + 7919*j + 104729*salt) % vocab)
				}
				return p
			}
			p1, p2 := prompt(40, 1), prompt(60, 2)
			pool := int64(4*(batchCtx/batchBlock)+1) * kvBlockBytes(man)

			// (1) Through the pool and back.
			b, err := gdev.NewBatch(runtime.BatchConfig{Sequences: 4, StepTokens: batchMaxTokens, BlockTokens: batchBlock, KVBytes: pool, Solo: true})
			if err != nil {
				t.Fatal(err)
			}
			sb := b.(runtime.SoloBatch)
			seqs := batchtest.Sequences(2, vocab, b.Blocks())
			tA, tB := seqs[0].Blocks, seqs[1].Blocks
			const steps = 9
			want, wantRows := aloneGreedy(t, gdev, p1, steps)
			solo, ctx := sb.Solo(), context.Background()
			check := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			check(sb.LoadSolo(tA, 0, 0))
			_, err = solo.Forward(ctx, p1)
			check(err)
			check(sb.StoreSolo(tA, 0, len(p1)))
			check(sb.LoadSolo(tB, 0, 0))
			_, err = solo.Forward(ctx, p2)
			check(err)
			check(sb.LoadSolo(tA, 0, len(p1)))
			for k := 1; k < steps; k++ {
				row, err := solo.Forward(ctx, want[k-1:k])
				check(err)
				if e := relErr(row, wantRows[k]); e > soloTolerance {
					t.Fatalf("decode step %d after the round trip: relative error %.2e against a fresh sequence (bound %.0e)", k, e, soloTolerance)
				}
			}
			check(b.Close())

			// (2) Alone, together, alone again.
			s, err := batching.New(gdev, batching.Config{Slots: 4, PrefillChunk: 16, BlockTokens: batchBlock, KVBytes: pool})
			check(err)
			defer s.Close()
			type run struct {
				ids  []int32
				done bool
				err  error
			}
			start := func(p []int32, n int) *run {
				r := &run{}
				check(s.Admit(&batching.Request{Ctx: ctx, Prompt: p, Params: runtime.GenerateParams{MaxTokens: n},
					OnToken: func(id int32) bool { r.ids = append(r.ids, id); return true },
					Done:    func(_ runtime.GenerateResult, err error) { r.done, r.err = true, err }}))
				return r
			}
			a := start(p1, 48)
			for len(a.ids) < 10 {
				s.Step()
			}
			bRun := start(p2, 8)
			for !a.done || !bRun.done {
				s.Step()
			}
			for _, c := range []struct {
				name   string
				r      *run
				prompt []int32
			}{{"first", a, p1}, {"second", bRun, p2}} {
				if c.r.err != nil {
					t.Fatalf("%s request: %v", c.name, c.r.err)
				}
				want, rows := aloneGreedy(t, gdev, c.prompt, len(c.r.ids))
				for j := range want {
					if c.r.ids[j] == want[j] {
						continue
					}
					if !batchtest.NearTie(rows[j], c.r.ids[j], want[j], agreeTolerance) {
						t.Errorf("%s request, token %d: %d across the hand-overs, %d alone, not a near-tie\ngot   %v\nalone %v", c.name, j, c.r.ids[j], want[j], c.r.ids, want)
					} else {
						t.Logf("%s request parts from its run alone at token %d of %d, a near-tie", c.name, j, len(want))
					}
					break
				}
			}
		})
	}
}

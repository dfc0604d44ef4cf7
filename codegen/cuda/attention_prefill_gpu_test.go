package cuda_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/runtime"
)

// deepChunks are TestGPUAttention's chunks after a long context, (first
// position, tokens) in sequence order. In its plans of 512-token steps, a
// row block's keys split (attend_prefill) for Qwen2.5-0.5B 7, 9–10, 17 and
// 29 ways, Phi-3-mini 3, 6, 12 and 12, gpt-oss's full layers 3, 3, 6 and 8,
// stories260K 6, 9–10, 17 and 29, gpt-oss's windowed ones never; every
// chunk's rows see keys on both sides of each boundary.
var deepChunks = [][2]int{{4001, 512}, {4513, 128}, {8190, 64}, {16379, 5}}

// TestGPUPrefillAttentionTiming times attend_prefill (with kv_store) per
// layer at Qwen2.5-0.5B's, Phi-3-mini's and gpt-oss's shapes (its full
// layers and its windowed ones): a chunk of 512 and of 128 tokens after 0,
// 3,840 and 30,000 cached ones, plans of 8 and of 1 attention layers over
// the same q, k, v, (t₈ − t₁)/7 a layer, the median of 5. ORC_GPU_BENCH=1;
// it prints and asserts nothing about speed.
func TestGPUPrefillAttentionTiming(t *testing.T) {
	gpuOnly(t)
	if os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("set ORC_GPU=1 ORC_GPU_BENCH=1 on a GPU host")
	}
	const ctx = 30000 + 512
	const reps = 5
	layerCounts := []int{1, 8}
	depths, chunks := []int{0, 3840, 30000}, []int{512, 128}
	ds, ps := timedAttnPlans(t, rand.New(rand.NewPCG(13, 14)), layerCounts, ctx)
	for i, d := range ds {
		c := d.c
		// times[plan][depth·len(chunks) + chunk]
		times := make([][]time.Duration, len(layerCounts))
		for pi := range layerCounts {
			k := i*len(layerCounts) + pi
			dev := ps[k].open(t, ctx, d)
			for _, p := range depths {
				for _, n := range chunks {
					times[pi] = append(times[pi], timePrefill(t, dev, ctx, p, n, reps))
				}
			}
			dev.Close()
		}
		for di, p := range depths {
			for ci, n := range chunks {
				m := di*len(chunks) + ci
				us := float64((times[1][m] - times[0][m]).Nanoseconds()) / 7 / 1e3
				var flops float64
				for j := p; j < p+n; j++ {
					keys := j + 1
					if c.window > 0 {
						keys = min(keys, c.window)
					}
					flops += float64(keys * c.heads * c.hd * 4)
				}
				t.Logf("%-13s prefill %3d after %5d: %8.1f µs/layer, %6.1f TFLOP/s (causal q·k and p·v)", c.name, n, p, us, flops/us/1e6)
			}
		}
	}
}

// timedAttnPlans are the timed cases' data and, for each, its plans of
// each of layerCounts attention layers (last() of the final one out) under
// the target's own decode geometry, compiled: case i's plan of
// layerCounts[j] layers at i·len(layerCounts)+j.
func timedAttnPlans(t *testing.T, r *rand.Rand, layerCounts []int, ctx int) ([]*attnData, []attnPlan) {
	t.Helper()
	var ds []*attnData
	var ps []attnPlan
	for _, c := range attnCases {
		if !c.timed {
			continue
		}
		ds = append(ds, newAttnData(c, r))
		for _, l := range layerCounts {
			ps = append(ps, newAttnPlan(t, c, l, false, ctx, decodeTunings[0]))
		}
	}
	compilePlans(t, ps)
	return ds, ps
}

// timePrefill is the median time of reps steps of n tokens, each in a new
// sequence of capacity ctx after p cached tokens.
func timePrefill(t *testing.T, dev runtime.Device, ctx, p, n, reps int) time.Duration {
	t.Helper()
	var ts []time.Duration
	for range reps {
		s, err := dev.NewSequence(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p > 0 {
			forward(t, s, attnTokens(0, p), 0)
		}
		start := time.Now()
		forward(t, s, attnTokens(p, p+n), 0)
		ts = append(ts, time.Since(start))
		s.Close()
	}
	return median(ts)
}

// TestGPUPresetsMatchCPUAtDepth is TestGPUPresetsMatchCPU after a long
// prompt: the tiny Qwen2.5, Phi-3 (its 2,047-key window) and gpt-oss (a
// windowed and a full layer, sinks) presets take a 4,000-token prompt,
// which the GPU prefills in 512-token chunks whose keys split across
// blocks past the first (Qwen2.5's last chunk 8 ways), then 8 decode steps:
// every logits row within agreeTolerance of the CPU device's, every argmax
// the CPU's.
func TestGPUPresetsMatchCPUAtDepth(t *testing.T) {
	gpuOnly(t)
	const promptLen, ctx, steps, maxTokens = 4000, 4096, 8, 512
	configs := []agreeConfig{{preset: "qwen2.5-0.5b-tiny", quant: synth.QuantF16}, {preset: "phi-3-mini-4k-tiny", quant: synth.QuantQ4KM},
		{preset: "gpt-oss-20b-tiny", quant: synth.QuantMXFP4}}
	dir := t.TempDir()
	for _, c := range configs {
		t.Run(c.String(), func(t *testing.T) {
			model := filepath.Join(dir, c.String()+".gguf")
			c.write(t, model)
			r := runCPUPrompt(t, model, promptLen, ctx, steps)
			g, man, f := lowerGPU(t, model, maxTokens)
			worst, _, agree, within := r.compare(t, openGPUPlan(t, g, man, ctx, ggufData(f)))
			t.Logf("%-30s max|gpu-cpu|/max|cpu| %.2e  top-1 %d/%d  within %.0e %d/%d", c, worst, agree, len(r.rows), agreeTolerance, within, len(r.rows))
			if worst > agreeTolerance || agree != len(r.rows) {
				t.Errorf("relative logit error %.2e (bound %.0e), top-1 %d of %d rows", worst, agreeTolerance, agree, len(r.rows))
			}
		})
	}
}

package cuda_test

import (
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// tinyPresets are the synthetic tiny models whose emitted CUDA is compiled
// and compared with goldens.
var tinyPresets = []struct {
	preset string
	quant  synth.Quant
}{
	{"llama-tiny", synth.QuantQ4KM},
	{"qwen2.5-0.5b-tiny", synth.QuantQ4KM},
	{"qwen2.5-0.5b-tiny", synth.QuantQ4_0},
	{"phi-3-mini-4k-tiny", synth.QuantQ4KM},
	// Its packed attn_qkv is Q4_0, whose split GPU layout is laid out per
	// q, k, v segment (fuseQKV's row ranges).
	{"phi-3-mini-4k-tiny", synth.QuantQ4_0},
	{"gpt2-small-tiny", synth.QuantF16},
	// MXFP4 experts, Q8_0 attention, sinks, sliding window, YaRN.
	{"gpt-oss-20b-tiny", synth.QuantMXFP4},
	// K-quant experts (ffn_down_exps Q6_K): the prefill's expert tiles
	// stage 16 of their 64-element groups at a time, within 48 KiB of
	// static shared memory (32 took 0x11000 bytes: ptxas refused it).
	{"gpt-oss-20b-tiny", synth.QuantQ4KM},
	// q/k norm folded with RoPE into norm_rope; head dim apart from n_embd.
	{"qwen3-tiny", synth.QuantQ4KM},
	// Experts without biases, plain SwiGLU, K-quants.
	{"qwen3-30b-a3b-tiny", synth.QuantQ4KM},
	// Llama 3's rope_freqs folded into the qkv kernel's RoPE.
	{"llama-3.2-1b-tiny", synth.QuantQ4KM},
	// Embedding scale, post norms, GELU-gated FFN, q/k norm, local and
	// global (linearly scaled) RoPE, a hidden size off the 256-blocks.
	{"gemma-3-tiny", synth.QuantQ4KM},
	// A NoPE layer (the 4th): its qkv kernel rotates nothing while the
	// other layers' rotate in the epilogue.
	{"smollm3-3b-tiny", synth.QuantQ4KM},
}

const testMaxTokens = 64

// writeTiny writes a synthetic preset in quant q and returns its path.
func writeTiny(t *testing.T, preset string, q synth.Quant) string {
	t.Helper()
	p, err := synth.Lookup(preset)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := synth.Plan(p, q)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := sm.WriteFile(path, 1); err != nil {
		t.Fatal(err)
	}
	return path
}

// tinyPlan writes a synthetic preset, lowers it and runs the GPU pipeline.
func tinyPlan(t *testing.T, preset string, q synth.Quant) (*ir.Graph, *plans.Manifest, *gguf.File) {
	t.Helper()
	return lowerGPU(t, writeTiny(t, preset, q), testMaxTokens)
}

// tinyOutput is cuda.Generate's output for a tiny preset's plan (tinyPlan)
// and the plan's manifest.
func tinyOutput(t *testing.T, preset string, q synth.Quant) (*cuda.Output, *plans.Manifest) {
	t.Helper()
	g, man, _ := tinyPlan(t, preset, q)
	return generate(t, g, man, ""), man
}

// generate is cuda.Generate's output for a planned graph and its manifest,
// for arch ("": the default).
func generate(t *testing.T, g *ir.Graph, man *plans.Manifest, arch string) *cuda.Output {
	t.Helper()
	out, err := cuda.Generate(g, man, cuda.Options{Arch: arch})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lowerGPU lowers a GGUF model, runs the GPU pipeline for sm_90 and returns
// the graph, a manifest with weight offsets placed as plans.Write places
// them, and the open file.
func lowerGPU(t *testing.T, path string, maxTokens int) (*ir.Graph, *plans.Manifest, *gguf.File) {
	t.Helper()
	return lowerFor(t, path, maxTokens, cuda.DefaultArch)
}

// lowerFor is lowerGPU for CUDA target target.
func lowerFor(t *testing.T, path string, maxTokens int, target string) (*ir.Graph, *plans.Manifest, *gguf.File) {
	t.Helper()
	return lowerForKV(t, path, maxTokens, target, "")
}

// lowerForKV is lowerFor with the KV cache format kv (compiler.Options.KVCache).
func lowerForKV(t *testing.T, path string, maxTokens int, target, kv string) (*ir.Graph, *plans.Manifest, *gguf.File) {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := arch.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := compiler.Lower(m, maxTokens)
	if err != nil {
		t.Fatal(err)
	}
	if err := compiler.SetKVCache(g, kv); err != nil {
		t.Fatal(err)
	}
	if err := passes.Run(g, passes.Options{Target: target, Verify: true}); err != nil {
		t.Fatal(err)
	}
	h := &m.H
	man := &plans.Manifest{
		CompilerVersion: "codegen/cuda test", Target: target, Graph: ir.Print(g),
		Model: plans.Model{Name: h.Arch, Arch: h.Arch, NLayer: h.NLayer, NEmbd: h.NEmbd, NHead: h.NHead,
			NHeadKV: h.NHeadKV, HeadDim: h.HeadDim, Vocab: h.NVocab, ContextLength: h.NCtx, KVCache: ir.KVCacheOf(g)},
		Memory: plans.Memory{MaxTokens: maxTokens},
	}
	man.Memory.KVBytesPerToken = man.Model.KVBytes(1)
	if man.Tensors, err = compiler.WeightTable(g, f); err != nil {
		t.Fatal(err)
	}
	placeTensors(man.Tensors)
	return g, man, f
}

// placeTensors sets weights.bin offsets as plans.Write does: table order,
// each tensor plans.Alignment-aligned.
func placeTensors(ts []plans.Tensor) {
	var off int64
	for i := range ts {
		off = (off + plans.Alignment - 1) / plans.Alignment * plans.Alignment
		ts[i].Offset = off
		off += ts[i].Bytes
	}
}

package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/plans"
)

// qkNormFoldConfigs are models whose q and k are normed per head before
// RoPE, whose decode attentions fold those norms, their RoPE and their kv
// store into attend_decode (fold_qk_norm): the tiny presets (head_dim 128
// and 64, 2 and 4 query heads a kv head, Gemma's sliding window of 8 keys)
// and the real widths of Qwen3-8B (head_dim 128, 4 a kv head), Gemma 3 4B
// (head_dim 256, 2 a kv head, five sliding layers and a global one) and
// Qwen3-30B-A3B (8 a kv head), cut to a few layers.
var qkNormFoldConfigs = []agreeConfig{
	{preset: "qwen3-tiny", quant: synth.QuantQ4KM},
	{preset: "gemma-3-tiny", quant: synth.QuantQ4KM},
	{preset: "qwen3-8b", quant: synth.QuantQ4KM, layers: 1},
	{preset: "gemma-3-4b", quant: synth.QuantQ4KM, layers: 6},
	{preset: "qwen3-30b-a3b", quant: synth.QuantQ4KM, layers: 1},
}

// TestQKNormFoldPlans checks, without a GPU, that the harness's tiny plans
// run the kernel under test: every decode attention is an attend_decode
// that folds its q/k norms (QKNorm), and decode launches no norm_rope_rows
// and no kv_store, while the prefill keeps both.
func TestQKNormFoldPlans(t *testing.T) {
	for _, c := range qkNormFoldConfigs[:2] {
		t.Run(c.String(), func(t *testing.T) {
			out, _ := tinyOutput(t, c.preset, c.quant)
			checkQKNormFolded(t, out.Kernels)
		})
	}
}

// checkQKNormFolded fails unless every decode attend_decode of k folds its
// q/k norms, decode launches no norm_rope_rows or kv_store, and the
// prefill launches both.
func checkQKNormFolded(t *testing.T, k *plans.Kernels) {
	t.Helper()
	attends := 0
	for _, l := range k.Decode {
		switch {
		case strings.HasPrefix(l.Kernel, "attend_decode_"):
			attends++
			if !strings.Contains(l.Kernel, "_QKNorm_") {
				t.Errorf("decode %s does not fold its q/k norms", l.Kernel)
			}
		case strings.HasPrefix(l.Kernel, "norm_rope_rows_"), strings.HasPrefix(l.Kernel, "kv_store_"):
			t.Errorf("decode launches %s, which its attention folds in", l.Kernel)
		}
	}
	if attends == 0 {
		t.Error("no attend_decode in the decode schedule")
	}
	if !launches(k.Prefill, "norm_rope_rows") || !launches(k.Prefill, "kv_store") {
		t.Error("the prefill lost its norm_rope_rows or kv_store launches")
	}
}

// TestGPUQKNormFoldMatchesCPU runs the models of qkNormFoldConfigs on the
// GPU, whose decode attentions fold their q/k norms, RoPE and kv store,
// and on the CPU reference device, which runs the norms and RoPE as the
// IR says: a 48-token prompt (two prefills, which keep their own norm and
// store launches), then 64 decode steps fed the CPU's greedy token, every
// logits row compared (agree_test.go's bound and top-1 agreement; the
// MoE's top-1 agreement alone). A step
// whose new key the attention stored wrongly, or normed or rotated q or k
// wrongly, moves every later row.
func TestGPUQKNormFoldMatchesCPU(t *testing.T) {
	gpuOnly(t)
	for _, c := range qkNormFoldConfigs {
		dir := t.TempDir()
		model := dir + "/" + c.String() + ".gguf"
		c.write(t, model)
		g, man, _ := lowerGPU(t, model, gpuMaxTokens)
		checkQKNormFolded(t, generate(t, g, man, "").Kernels)
	}
	dense, moe := qkNormFoldConfigs[:4], qkNormFoldConfigs[4:]
	matchCPU(t, dense, agreeTolerance)
	// A router near-tie moves an MoE's rows by more than rounding
	// (TestGPUMoEMatchesCPU): top-1 agreement only.
	matchCPU(t, moe, 0)
}

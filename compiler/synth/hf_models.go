package synth

import (
	"fmt"
	"strconv"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
)

func layerName(prefix string, i int, rest string) string {
	return fmt.Sprintf("%s.%d.%s", prefix, i, rest)
}

// unpermuted undoes llama.cpp's q/k row permutation for llama: within each
// head GGUF row 2i+s holds HF row s·D/2+i, so that adjacent pairs rotate.
// Vectors (biases) are permuted the same way.
func (r hfReader) unpermuted(name string, t *gguf.TensorInfo, heads int) stTensor {
	return stTensor{name: name, shape: hfShape(t), dtype: exportType(t), produce: func(emit func([]float32) error) error {
		cols := 1
		if len(t.Dims) == 2 {
			cols = int(t.Dims[0])
		}
		vals, err := r.rows(t, 0, nRows(t))
		if err != nil {
			return err
		}
		rows := len(vals) / cols
		d := rows / heads
		out := make([]float32, len(vals))
		for h := 0; h < heads; h++ {
			for s := 0; s < 2; s++ {
				for i := 0; i < d/2; i++ {
					hfRow, ggRow := h*d+s*d/2+i, h*d+2*i+s
					copy(out[hfRow*cols:(hfRow+1)*cols], vals[ggRow*cols:(ggRow+1)*cols])
				}
			}
		}
		return emit(out)
	}}
}

// asStored gives a GGUF f32 value its shortest decimal form (1e-05, not
// 9.999999747378752e-06), which is what the original config said.
func asStored(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(float32(x)), 'g', -1, 32), 64)
	return v
}

// baseConfig is the config.json common to the RoPE models. RoPE goes in
// both spellings: rope_parameters (transformers 5, which otherwise falls back
// to a class default) and the legacy rope_theta/rope_scaling (4.x).
func baseConfig(h *arch.Hparams, archName, modelType string, tied bool) map[string]any {
	rope := map[string]any{"rope_type": "default", "rope_theta": asStored(h.RopeBase)}
	if h.Scaling.Type == "yarn" {
		rope = map[string]any{
			"rope_type": "yarn", "rope_theta": asStored(h.RopeBase), "factor": h.Scaling.Factor,
			"beta_fast": h.Scaling.BetaFast, "beta_slow": h.Scaling.BetaSlow,
			"original_max_position_embeddings": h.Scaling.OrigCtx, "truncate": false,
		}
	}
	return map[string]any{"rope_parameters": rope,
		"architectures": []string{archName}, "model_type": modelType,
		"hidden_size": h.NEmbd, "intermediate_size": h.NFF, "num_hidden_layers": h.NLayer,
		"num_attention_heads": h.NHead, "num_key_value_heads": h.NHeadKV, "head_dim": h.HeadDim,
		"max_position_embeddings": h.NCtx, "rms_norm_eps": asStored(h.Eps), "rope_theta": asStored(h.RopeBase),
		"hidden_act": "silu", "tie_word_embeddings": tied, "attention_dropout": 0.0, "use_cache": true,
	}
}

func init() {
	hfExporters["llama"] = func(r hfReader, m *arch.Model, p *Preset) ([]stTensor, map[string]any, error) {
		return hfLlama(r, m, p, m.Weights.(*arch.Llama))
	}
	hfExporters["qwen2"] = func(r hfReader, m *arch.Model, _ *Preset) ([]stTensor, map[string]any, error) {
		ts, c := hfQwen2(r, &m.H, m.Weights.(*arch.Qwen2))
		return ts, c, nil
	}
	hfExporters["phi3"] = func(r hfReader, m *arch.Model, _ *Preset) ([]stTensor, map[string]any, error) {
		ts, c := hfPhi3(r, &m.H, m.Weights.(*arch.Phi3))
		return ts, c, nil
	}
	hfExporters["gpt2"] = func(r hfReader, m *arch.Model, _ *Preset) ([]stTensor, map[string]any, error) {
		ts, c := hfGPT2(r, &m.H, m.Weights.(*arch.GPT2))
		return ts, c, nil
	}
}

// hfLlama exports llama; a file with rope_freqs (Llama 3) takes the llama3
// RoPE scaling of its preset, after checking that the file's divisors are
// that rule's.
func hfLlama(r hfReader, m *arch.Model, p *Preset, w *arch.Llama) ([]stTensor, map[string]any, error) {
	h := &m.H
	rope, err := llama3Config(r, h, p, w.RopeFreqs)
	if err != nil {
		return nil, nil, err
	}
	ts := []stTensor{r.same("model.embed_tokens.weight", w.TokenEmbd)}
	bias := false
	for i, l := range w.Layers {
		p := func(s string) string { return layerName("model.layers", i, s) }
		ts = append(ts,
			r.same(p("input_layernorm.weight"), l.AttnNorm),
			r.unpermuted(p("self_attn.q_proj.weight"), l.AttnQ, h.NHead),
			r.unpermuted(p("self_attn.k_proj.weight"), l.AttnK, h.NHeadKV),
			r.same(p("self_attn.v_proj.weight"), l.AttnV),
			r.same(p("self_attn.o_proj.weight"), l.AttnOutput))
		if l.AttnQBias != nil && l.AttnKBias != nil && l.AttnVBias != nil && l.AttnOutputBias != nil {
			bias = true
			ts = append(ts,
				r.unpermuted(p("self_attn.q_proj.bias"), l.AttnQBias, h.NHead),
				r.unpermuted(p("self_attn.k_proj.bias"), l.AttnKBias, h.NHeadKV),
				r.same(p("self_attn.v_proj.bias"), l.AttnVBias),
				r.same(p("self_attn.o_proj.bias"), l.AttnOutputBias))
		}
		ts = append(ts,
			r.same(p("post_attention_layernorm.weight"), l.FFNNorm),
			r.same(p("mlp.gate_proj.weight"), l.FFNGate),
			r.same(p("mlp.up_proj.weight"), l.FFNUp),
			r.same(p("mlp.down_proj.weight"), l.FFNDown))
	}
	ts = append(ts, r.head(w.OutputNorm, w.Output)...)
	c := baseConfig(h, "LlamaForCausalLM", "llama", w.Output == nil)
	c["attention_bias"] = bias
	c["mlp_bias"] = false
	if rope != nil {
		c["rope_parameters"], c["rope_scaling"] = rope, rope
	}
	return ts, c, nil
}

func hfQwen2(r hfReader, h *arch.Hparams, w *arch.Qwen2) ([]stTensor, map[string]any) {
	ts := []stTensor{r.same("model.embed_tokens.weight", w.TokenEmbd)}
	for i, l := range w.Layers {
		p := func(s string) string { return layerName("model.layers", i, s) }
		ts = append(ts,
			r.same(p("input_layernorm.weight"), l.AttnNorm),
			r.same(p("self_attn.q_proj.weight"), l.AttnQ), r.same(p("self_attn.q_proj.bias"), l.AttnQBias),
			r.same(p("self_attn.k_proj.weight"), l.AttnK), r.same(p("self_attn.k_proj.bias"), l.AttnKBias),
			r.same(p("self_attn.v_proj.weight"), l.AttnV), r.same(p("self_attn.v_proj.bias"), l.AttnVBias),
			r.same(p("self_attn.o_proj.weight"), l.AttnOutput),
			r.same(p("post_attention_layernorm.weight"), l.FFNNorm),
			r.same(p("mlp.gate_proj.weight"), l.FFNGate),
			r.same(p("mlp.up_proj.weight"), l.FFNUp),
			r.same(p("mlp.down_proj.weight"), l.FFNDown))
	}
	ts = append(ts, r.head(w.OutputNorm, w.Output)...)
	c := baseConfig(h, "Qwen2ForCausalLM", "qwen2", w.Output == nil)
	c["use_sliding_window"] = false
	c["max_window_layers"] = h.NLayer
	return ts, c
}

func hfPhi3(r hfReader, h *arch.Hparams, w *arch.Phi3) ([]stTensor, map[string]any) {
	ts := []stTensor{r.same("model.embed_tokens.weight", w.TokenEmbd)}
	for i, l := range w.Layers {
		p := func(s string) string { return layerName("model.layers", i, s) }
		ts = append(ts,
			r.same(p("input_layernorm.weight"), l.AttnNorm),
			r.same(p("self_attn.qkv_proj.weight"), l.AttnQKV), // fused in HF too: q, k, v rows
			r.same(p("self_attn.o_proj.weight"), l.AttnOutput),
			r.same(p("post_attention_layernorm.weight"), l.FFNNorm),
			r.same(p("mlp.gate_up_proj.weight"), l.FFNUp), // fused in HF too: gate rows, then up
			r.same(p("mlp.down_proj.weight"), l.FFNDown))
	}
	ts = append(ts, r.head(w.OutputNorm, w.Output)...)
	c := baseConfig(h, "Phi3ForCausalLM", "phi3", false)
	c["partial_rotary_factor"] = float64(h.RopeDims) / float64(h.HeadDim)
	c["original_max_position_embeddings"] = max(h.Scaling.OrigCtx, h.NCtx)
	if h.SlidingWindow > 0 {
		c["sliding_window"] = h.SlidingWindow
	}
	delete(c, "head_dim")
	return ts, c
}

func hfGPT2(r hfReader, h *arch.Hparams, w *arch.GPT2) ([]stTensor, map[string]any) {
	ts := []stTensor{r.same("transformer.wte.weight", w.TokenEmbd), r.same("transformer.wpe.weight", w.PositionEmbd)}
	for i, l := range w.Layers {
		p := func(s string) string { return layerName("transformer.h", i, s) }
		// GPT-2's Conv1D stores weights [in, out]: transposed against GGUF.
		ts = append(ts,
			r.same(p("ln_1.weight"), l.AttnNorm), r.same(p("ln_1.bias"), l.AttnNormBias),
			r.transposed(p("attn.c_attn.weight"), l.AttnQKV), r.same(p("attn.c_attn.bias"), l.AttnQKVBias),
			r.transposed(p("attn.c_proj.weight"), l.AttnOutput), r.same(p("attn.c_proj.bias"), l.AttnOutputBias),
			r.same(p("ln_2.weight"), l.FFNNorm), r.same(p("ln_2.bias"), l.FFNNormBias),
			r.transposed(p("mlp.c_fc.weight"), l.FFNUp), r.same(p("mlp.c_fc.bias"), l.FFNUpBias),
			r.transposed(p("mlp.c_proj.weight"), l.FFNDown), r.same(p("mlp.c_proj.bias"), l.FFNDownBias))
	}
	ts = append(ts, r.same("transformer.ln_f.weight", w.OutputNorm), r.same("transformer.ln_f.bias", w.OutputNormBias))
	if w.Output != nil {
		ts = append(ts, r.same("lm_head.weight", w.Output))
	}
	c := map[string]any{
		"architectures": []string{"GPT2LMHeadModel"}, "model_type": "gpt2",
		"n_embd": h.NEmbd, "n_layer": h.NLayer, "n_head": h.NHead, "n_positions": h.NCtx, "n_ctx": h.NCtx,
		"n_inner": h.NFF, "layer_norm_epsilon": asStored(h.Eps), "activation_function": "gelu_new",
		"tie_word_embeddings": w.Output == nil, "scale_attn_weights": true, "use_cache": true,
		"resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
	}
	return ts, c
}

package synth

import (
	"fmt"
	"math"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
)

// Hugging Face exports of Qwen3 (Qwen3ForCausalLM), Qwen3-MoE
// (Qwen3MoeForCausalLM, one 2-D tensor per expert as the Hub checkpoints
// hold them), Gemma 3 (Gemma3ForCausalLM of a gemma3_text config) and
// Llama 3's RoPE scaling.

func init() {
	hfExporters["qwen3"] = func(r hfReader, m *arch.Model, _ *Preset) ([]stTensor, map[string]any, error) {
		w := m.Weights.(*arch.Qwen3)
		ts := []stTensor{r.same("model.embed_tokens.weight", w.TokenEmbd)}
		for i, l := range w.Layers {
			p := func(s string) string { return layerName("model.layers", i, s) }
			ts = append(ts, qwen3Attention(r, p, l.AttnNorm, l.AttnQ, l.AttnK, l.AttnV, l.AttnQNorm, l.AttnKNorm, l.AttnOutput, l.FFNNorm)...)
			ts = append(ts,
				r.same(p("mlp.gate_proj.weight"), l.FFNGate),
				r.same(p("mlp.up_proj.weight"), l.FFNUp),
				r.same(p("mlp.down_proj.weight"), l.FFNDown))
		}
		ts = append(ts, r.head(w.OutputNorm, w.Output)...)
		return ts, qwen3Config(&m.H, "Qwen3ForCausalLM", "qwen3", w.Output == nil), nil
	}
	hfExporters["qwen3moe"] = func(r hfReader, m *arch.Model, _ *Preset) ([]stTensor, map[string]any, error) {
		w, h := m.Weights.(*arch.Qwen3MoE), &m.H
		ts := []stTensor{r.same("model.embed_tokens.weight", w.TokenEmbd)}
		for i, l := range w.Layers {
			p := func(s string) string { return layerName("model.layers", i, s) }
			ts = append(ts, qwen3Attention(r, p, l.AttnNorm, l.AttnQ, l.AttnK, l.AttnV, l.AttnQNorm, l.AttnKNorm, l.AttnOutput, l.FFNNorm)...)
			ts = append(ts, r.same(p("mlp.gate.weight"), l.FFNGateInp))
			ff, d := uint64(h.ExpertFF), uint64(h.NEmbd)
			for e := uint64(0); e < uint64(h.NExpert); e++ {
				x := func(s string) string { return p(fmt.Sprintf("mlp.experts.%d.%s", e, s)) }
				ts = append(ts,
					r.expertRows(x("gate_proj.weight"), l.FFNGateExps, e*ff, ff),
					r.expertRows(x("up_proj.weight"), l.FFNUpExps, e*ff, ff),
					r.expertRows(x("down_proj.weight"), l.FFNDownExps, e*d, d))
			}
		}
		ts = append(ts, r.head(w.OutputNorm, w.Output)...)
		c := qwen3Config(h, "Qwen3MoeForCausalLM", "qwen3_moe", w.Output == nil)
		c["num_experts"], c["num_experts_per_tok"], c["moe_intermediate_size"] = h.NExpert, h.NExpertUsed, h.ExpertFF
		c["norm_topk_prob"], c["decoder_sparse_step"], c["mlp_only_layers"] = true, 1, []int{}
		// A training coefficient, never read at inference; Qwen3-MoE's own
		// value, since Go writes 0.0 as 0, which transformers' strict config
		// refuses as an int.
		c["output_router_logits"], c["router_aux_loss_coef"] = false, 0.001
		return ts, c, nil
	}
	hfExporters["gemma3"] = hfGemma3
}

// qwen3Attention is a qwen3 or qwen3moe layer's norms and attention.
func qwen3Attention(r hfReader, p func(string) string, attnNorm, q, k, v, qNorm, kNorm, out, ffnNorm *gguf.TensorInfo) []stTensor {
	return []stTensor{
		r.same(p("input_layernorm.weight"), attnNorm),
		r.same(p("self_attn.q_proj.weight"), q),
		r.same(p("self_attn.k_proj.weight"), k),
		r.same(p("self_attn.v_proj.weight"), v),
		r.same(p("self_attn.q_norm.weight"), qNorm),
		r.same(p("self_attn.k_norm.weight"), kNorm),
		r.same(p("self_attn.o_proj.weight"), out),
		r.same(p("post_attention_layernorm.weight"), ffnNorm),
	}
}

func qwen3Config(h *arch.Hparams, archName, modelType string, tied bool) map[string]any {
	c := baseConfig(h, archName, modelType, tied)
	c["attention_bias"] = false
	c["use_sliding_window"] = false
	c["max_window_layers"] = h.NLayer
	return c
}

// expertRows exports rows [first, first+n) of an expert stack (expert e's
// [n][cols] matrix) as one 2-D tensor.
func (r hfReader) expertRows(name string, t *gguf.TensorInfo, first, n uint64) stTensor {
	return stTensor{name: name, shape: []int{int(n), int(t.Dims[0])}, dtype: exportType(t), produce: func(emit func([]float32) error) error {
		vals, err := r.rows(t, first, n)
		if err != nil {
			return err
		}
		return emit(vals)
	}}
}

// minusOne exports a Gemma norm weight: llama.cpp's converter stored 1 + w
// (arch.WeightOnePlusStoredByConverter) and transformers adds the 1 itself.
// v − 1 is exact in float32 for the stored weights near 1.
func (r hfReader) minusOne(name string, t *gguf.TensorInfo) stTensor {
	return stTensor{name: name, shape: hfShape(t), dtype: gguf.F32, produce: func(emit func([]float32) error) error {
		vals, err := r.rows(t, 0, nRows(t))
		if err != nil {
			return err
		}
		for i := range vals {
			vals[i]--
		}
		return emit(vals)
	}}
}

func hfGemma3(r hfReader, m *arch.Model, _ *Preset) ([]stTensor, map[string]any, error) {
	w, h := m.Weights.(*arch.Gemma3), &m.H
	if w.Output != nil {
		return nil, nil, fmt.Errorf("synth: Gemma3ForCausalLM ties its head; this file has output.weight")
	}
	ts := []stTensor{r.same("model.embed_tokens.weight", w.TokenEmbd)}
	types := make([]string, h.NLayer)
	for i, l := range w.Layers {
		p := func(s string) string { return layerName("model.layers", i, s) }
		ts = append(ts,
			r.minusOne(p("input_layernorm.weight"), l.AttnNorm),
			r.same(p("self_attn.q_proj.weight"), l.AttnQ),
			r.same(p("self_attn.k_proj.weight"), l.AttnK),
			r.same(p("self_attn.v_proj.weight"), l.AttnV),
			r.minusOne(p("self_attn.q_norm.weight"), l.AttnQNorm),
			r.minusOne(p("self_attn.k_norm.weight"), l.AttnKNorm),
			r.same(p("self_attn.o_proj.weight"), l.AttnOutput),
			r.minusOne(p("post_attention_layernorm.weight"), l.PostAttnNorm),
			r.minusOne(p("pre_feedforward_layernorm.weight"), l.FFNNorm),
			r.same(p("mlp.gate_proj.weight"), l.FFNGate),
			r.same(p("mlp.up_proj.weight"), l.FFNUp),
			r.same(p("mlp.down_proj.weight"), l.FFNDown),
			r.minusOne(p("post_feedforward_layernorm.weight"), l.PostFFNNorm))
		types[i] = "full_attention"
		if h.IsSWA(i) {
			types[i] = "sliding_attention"
		}
	}
	ts = append(ts, r.minusOne("model.norm.weight", w.OutputNorm))
	local := map[string]any{"rope_type": "default", "rope_theta": m.Arch.Compute.LocalRope.Base}
	global := map[string]any{"rope_type": "default", "rope_theta": asStored(h.RopeBase)}
	var scaling any // transformers 4's rope_scaling: the global layers'
	if h.Scaling.Type == "linear" && h.Scaling.Factor != 1 {
		global["rope_type"], global["factor"] = "linear", h.Scaling.Factor
		scaling = map[string]any{"rope_type": "linear", "factor": h.Scaling.Factor}
	}
	scale := m.Arch.AttentionScale(h)
	c := map[string]any{
		"architectures": []string{"Gemma3ForCausalLM"}, "model_type": "gemma3_text",
		"hidden_size": h.NEmbd, "intermediate_size": h.NFF, "num_hidden_layers": h.NLayer,
		"num_attention_heads": h.NHead, "num_key_value_heads": h.NHeadKV, "head_dim": h.HeadDim,
		"max_position_embeddings": h.NCtx, "rms_norm_eps": asStored(h.Eps),
		"hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": true, "attention_bias": false,
		"attention_dropout": 0.0, "use_cache": true,
		// The attention scale is query_pre_attn_scalar^-½.
		"query_pre_attn_scalar": math.Round(1 / (scale * scale)),
		"sliding_window":        h.SlidingWindow, "layer_types": types,
		"final_logit_softcapping": nil, "attn_logit_softcapping": nil,
		// transformers 5: RoPE per layer type; 4: rope_theta, rope_scaling
		// (global layers) and rope_local_base_freq.
		"rope_parameters": map[string]any{"full_attention": global, "sliding_attention": local},
		"rope_theta":      asStored(h.RopeBase), "rope_local_base_freq": m.Arch.Compute.LocalRope.Base, "rope_scaling": scaling,
	}
	return ts, c, nil
}

// llama3Config is the llama3 RoPE scaling of a Llama file with rope_freqs
// (nil without): its preset's parameters, once the file's divisors are
// checked to be theirs, since transformers recomputes them from the
// parameters.
func llama3Config(r hfReader, h *arch.Hparams, p *Preset, freqs *gguf.TensorInfo) (map[string]any, error) {
	if freqs == nil {
		return nil, nil
	}
	if p.Llama3Rope == nil {
		return nil, fmt.Errorf("synth: preset %s has no llama3 RoPE scaling for the file's %s", p.Name, freqs.Name)
	}
	got, err := r.rows(freqs, 0, 1)
	if err != nil {
		return nil, err
	}
	want := p.Llama3Rope.Divisors(h.RopeDims, h.RopeBase)
	for i := range want {
		if got[i] != want[i] {
			return nil, fmt.Errorf("synth: %s[%d] is %g, preset %s's llama3 rule gives %g", freqs.Name, i, got[i], p.Name, want[i])
		}
	}
	l := p.Llama3Rope
	return map[string]any{"rope_type": "llama3", "rope_theta": asStored(h.RopeBase), "factor": l.Factor,
		"low_freq_factor": l.LowFreqFactor, "high_freq_factor": l.HighFreqFactor, "original_max_position_embeddings": l.OrigCtx}, nil
}

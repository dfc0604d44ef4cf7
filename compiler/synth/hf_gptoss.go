package synth

import (
	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
)

// transformers' GptOssExperts keeps gate and up fused and interleaved:
// gate_up_proj [E, hidden, 2F] with gate in the even columns and up in the
// odd ones, gate_up_proj_bias [E, 2F] likewise, down_proj [E, F, hidden];
// llama.cpp's converter splits and transposes them into ffn_gate_exps /
// ffn_up_exps [E][F][hidden] and ffn_down_exps [E][hidden][F]. These invert
// that exactly.

// gateUp interleaves expert e's gate and up ([F][hidden] each) into [hidden][2F].
func (r hfReader) gateUp(name string, gate, up *gguf.TensorInfo) stTensor {
	hidden, ff, experts := gate.Dims[0], gate.Dims[1], gate.Dims[2]
	return stTensor{name: name, shape: []int{int(experts), int(hidden), int(2 * ff)}, dtype: exportType(gate, up), produce: func(emit func([]float32) error) error {
		for e := uint64(0); e < experts; e++ {
			g, err := r.rows(gate, e*ff, ff)
			if err != nil {
				return err
			}
			u, err := r.rows(up, e*ff, ff)
			if err != nil {
				return err
			}
			out := make([]float32, len(g)+len(u))
			for f := uint64(0); f < ff; f++ {
				for k := uint64(0); k < hidden; k++ {
					out[k*2*ff+2*f] = g[f*hidden+k]
					out[k*2*ff+2*f+1] = u[f*hidden+k]
				}
			}
			if err := emit(out); err != nil {
				return err
			}
		}
		return nil
	}}
}

// gateUpBias interleaves the [E][F] gate and up biases into [E, 2F].
func (r hfReader) gateUpBias(name string, gate, up *gguf.TensorInfo) stTensor {
	ff, experts := gate.Dims[0], gate.Dims[1]
	return stTensor{name: name, shape: []int{int(experts), int(2 * ff)}, dtype: exportType(gate, up), produce: func(emit func([]float32) error) error {
		g, err := r.rows(gate, 0, experts)
		if err != nil {
			return err
		}
		u, err := r.rows(up, 0, experts)
		if err != nil {
			return err
		}
		out := make([]float32, 2*len(g))
		for i := range g {
			out[2*i], out[2*i+1] = g[i], u[i]
		}
		return emit(out)
	}}
}

// down transposes each expert's [hidden][F] into HF's [F, hidden].
func (r hfReader) down(name string, t *gguf.TensorInfo) stTensor {
	ff, hidden, experts := t.Dims[0], t.Dims[1], t.Dims[2]
	return stTensor{name: name, shape: []int{int(experts), int(ff), int(hidden)}, dtype: exportType(t), produce: func(emit func([]float32) error) error {
		for e := uint64(0); e < experts; e++ {
			d, err := r.rows(t, e*hidden, hidden)
			if err != nil {
				return err
			}
			if err := emit(transpose(d, int(hidden), int(ff))); err != nil {
				return err
			}
		}
		return nil
	}}
}

func init() {
	hfExporters["gpt-oss"] = func(r hfReader, m *arch.Model, _ *Preset) ([]stTensor, map[string]any, error) {
		ts, c := hfGPTOSS(r, &m.H, m.Weights.(*arch.GPTOSS))
		return ts, c, nil
	}
}

func hfGPTOSS(r hfReader, h *arch.Hparams, w *arch.GPTOSS) ([]stTensor, map[string]any) {
	ts := []stTensor{r.same("model.embed_tokens.weight", w.TokenEmbd)}
	layerTypes := make([]string, h.NLayer)
	for i, l := range w.Layers {
		layerTypes[i] = "full_attention"
		if h.IsSWA(i) {
			layerTypes[i] = "sliding_attention"
		}
		p := func(s string) string { return layerName("model.layers", i, s) }
		ts = append(ts,
			r.same(p("input_layernorm.weight"), l.AttnNorm),
			r.same(p("self_attn.q_proj.weight"), l.AttnQ), r.same(p("self_attn.q_proj.bias"), l.AttnQBias),
			r.same(p("self_attn.k_proj.weight"), l.AttnK), r.same(p("self_attn.k_proj.bias"), l.AttnKBias),
			r.same(p("self_attn.v_proj.weight"), l.AttnV), r.same(p("self_attn.v_proj.bias"), l.AttnVBias),
			r.same(p("self_attn.o_proj.weight"), l.AttnOutput), r.same(p("self_attn.o_proj.bias"), l.AttnOutputBias),
			r.same(p("self_attn.sinks"), l.AttnSinks),
			r.same(p("post_attention_layernorm.weight"), l.FFNNorm),
			r.same(p("mlp.router.weight"), l.FFNGateInp), r.same(p("mlp.router.bias"), l.FFNGateInpBias),
			r.gateUp(p("mlp.experts.gate_up_proj"), l.FFNGateExps, l.FFNUpExps),
			r.gateUpBias(p("mlp.experts.gate_up_proj_bias"), l.FFNGateExpsBias, l.FFNUpExpsBias),
			r.down(p("mlp.experts.down_proj"), l.FFNDownExps),
			r.same(p("mlp.experts.down_proj_bias"), l.FFNDownExpsBias))
	}
	ts = append(ts, r.head(w.OutputNorm, w.Output)...)
	c := baseConfig(h, "GptOssForCausalLM", "gpt_oss", false)
	c["intermediate_size"] = h.ExpertFF
	c["num_local_experts"] = h.NExpert
	c["num_experts_per_tok"] = h.NExpertUsed
	c["experts_per_token"] = h.NExpertUsed
	c["sliding_window"] = h.SlidingWindow
	c["layer_types"] = layerTypes
	c["attention_bias"] = true
	c["swiglu_limit"] = 7.0
	c["router_aux_loss_coef"] = 0.9
	c["output_router_logits"] = false
	c["initial_context_length"] = h.Scaling.OrigCtx
	scaling := map[string]any{}
	for k, v := range c["rope_parameters"].(map[string]any) {
		if k != "rope_theta" {
			scaling[k] = v
		}
	}
	c["rope_scaling"] = scaling
	return ts, c
}

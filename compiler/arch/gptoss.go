package arch

import "github.com/llama-orch/orc/gguf"

// GPTOSS is the gpt-oss architecture: GQA attention with biases and per-head
// sinks, sliding window on even layers, NeoX RoPE with YaRN, and a
// mixture-of-experts FFN (router top-k, then softmax over the chosen).
type GPTOSS struct {
	TokenEmbd  *gguf.TensorInfo `gguf:"token_embd.weight" shape:"n_embd,n_vocab"` // [n_vocab][n_embd]
	Layers     []GPTOSSLayer
	OutputNorm *gguf.TensorInfo `gguf:"output_norm.weight" shape:"n_embd"`
	Output     *gguf.TensorInfo `gguf:"output.weight" shape:"n_embd,n_vocab"` // [n_vocab][n_embd]
}

// GPTOSSLayer is one gpt-oss block. The FFN pre-norm (FFNNorm) is
// post_attention_norm (llama.cpp's name for HF's post_attention_layernorm).
type GPTOSSLayer struct {
	AttnNorm        *gguf.TensorInfo `gguf:"blk.%d.attn_norm.weight" shape:"n_embd"`
	AttnQ           *gguf.TensorInfo `gguf:"blk.%d.attn_q.weight" shape:"n_embd,n_q"` // [n_head*head_dim][n_embd]
	AttnQBias       *gguf.TensorInfo `gguf:"blk.%d.attn_q.bias" shape:"n_q"`
	AttnK           *gguf.TensorInfo `gguf:"blk.%d.attn_k.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnKBias       *gguf.TensorInfo `gguf:"blk.%d.attn_k.bias" shape:"n_kv"`
	AttnV           *gguf.TensorInfo `gguf:"blk.%d.attn_v.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnVBias       *gguf.TensorInfo `gguf:"blk.%d.attn_v.bias" shape:"n_kv"`
	AttnOutput      *gguf.TensorInfo `gguf:"blk.%d.attn_output.weight" shape:"n_q,n_embd"` // [n_embd][n_head*head_dim]
	AttnOutputBias  *gguf.TensorInfo `gguf:"blk.%d.attn_output.bias" shape:"n_embd"`
	AttnSinks       *gguf.TensorInfo `gguf:"blk.%d.attn_sinks.weight" shape:"n_head"` // [n_head]
	FFNNorm         *gguf.TensorInfo `gguf:"blk.%d.post_attention_norm.weight" shape:"n_embd"`
	FFNGateInp      *gguf.TensorInfo `gguf:"blk.%d.ffn_gate_inp.weight" shape:"n_embd,n_expert"` // router [n_expert][n_embd]
	FFNGateInpBias  *gguf.TensorInfo `gguf:"blk.%d.ffn_gate_inp.bias" shape:"n_expert"`
	FFNGateExps     *gguf.TensorInfo `gguf:"blk.%d.ffn_gate_exps.weight" shape:"n_embd,n_ff_exp,n_expert"` // [n_expert][n_ff_exp][n_embd]
	FFNGateExpsBias *gguf.TensorInfo `gguf:"blk.%d.ffn_gate_exps.bias" shape:"n_ff_exp,n_expert"`          // [n_expert][n_ff_exp]
	FFNUpExps       *gguf.TensorInfo `gguf:"blk.%d.ffn_up_exps.weight" shape:"n_embd,n_ff_exp,n_expert"`   // [n_expert][n_ff_exp][n_embd]
	FFNUpExpsBias   *gguf.TensorInfo `gguf:"blk.%d.ffn_up_exps.bias" shape:"n_ff_exp,n_expert"`            // [n_expert][n_ff_exp]
	FFNDownExps     *gguf.TensorInfo `gguf:"blk.%d.ffn_down_exps.weight" shape:"n_ff_exp,n_embd,n_expert"` // [n_expert][n_embd][n_ff_exp]
	FFNDownExpsBias *gguf.TensorInfo `gguf:"blk.%d.ffn_down_exps.bias" shape:"n_embd,n_expert"`            // [n_expert][n_embd]
}

func init() {
	register(&Arch{
		Name: "gpt-oss", EpsKey: "attention.layer_norm_rms_epsilon",
		Compute: Compute{
			Norm: RMSNorm, Rope: RopeNeoX, FFN: FFNExperts, Act: ActSiLU,
			// modeling_gpt_oss: router top-k then softmax over the chosen;
			// SwiGLU clamped at 7.0 with alpha 1.702.
			Experts: &Experts{Router: RouterTopKSoftmax, Clamp: &SwiGLUClamp{Limit: 7.0, Alpha: 1.702}},
			// llama.cpp's swa pattern 2: even layers slide, odd layers see everything.
			SlidingLayers: func(layer int) bool { return layer%2 == 0 },
		},
		NewWeights: func(n int) any { return &GPTOSS{Layers: make([]GPTOSSLayer, n)} },
		extra:      readExperts,
	})
}

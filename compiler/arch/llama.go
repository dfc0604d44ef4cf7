package arch

import "github.com/llama-orch/orc/gguf"

// Llama is the llama architecture (Llama 1-3, TinyLlama, stories): RMSNorm,
// SwiGLU, RoPE on q/k rows that llama.cpp's converter permuted so that
// adjacent pairs rotate ("normal" mode); Llama 3.1 and later divide the
// rotation frequencies by rope_freqs.weight (the llama3 scaling).
type Llama struct {
	TokenEmbd  *gguf.TensorInfo `gguf:"token_embd.weight" shape:"n_embd,n_vocab"`     // [n_vocab][n_embd]
	RopeFreqs  *gguf.TensorInfo `gguf:"rope_freqs.weight,optional" shape:"rope_half"` // Llama-3 frequency factors
	Layers     []LlamaLayer
	OutputNorm *gguf.TensorInfo `gguf:"output_norm.weight" shape:"n_embd"`
	Output     *gguf.TensorInfo `gguf:"output.weight,optional" shape:"n_embd,n_vocab"` // [n_vocab][n_embd]; absent = tied to token_embd
}

// LlamaLayer is one llama block. Biases are optional (some llama-architecture
// models carry them).
type LlamaLayer struct {
	AttnNorm       *gguf.TensorInfo `gguf:"blk.%d.attn_norm.weight" shape:"n_embd"`
	AttnQ          *gguf.TensorInfo `gguf:"blk.%d.attn_q.weight" shape:"n_embd,n_q"` // [n_head*head_dim][n_embd]
	AttnQBias      *gguf.TensorInfo `gguf:"blk.%d.attn_q.bias,optional" shape:"n_q"`
	AttnK          *gguf.TensorInfo `gguf:"blk.%d.attn_k.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnKBias      *gguf.TensorInfo `gguf:"blk.%d.attn_k.bias,optional" shape:"n_kv"`
	AttnV          *gguf.TensorInfo `gguf:"blk.%d.attn_v.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnVBias      *gguf.TensorInfo `gguf:"blk.%d.attn_v.bias,optional" shape:"n_kv"`
	AttnOutput     *gguf.TensorInfo `gguf:"blk.%d.attn_output.weight" shape:"n_q,n_embd"` // [n_embd][n_head*head_dim]
	AttnOutputBias *gguf.TensorInfo `gguf:"blk.%d.attn_output.bias,optional" shape:"n_embd"`
	FFNNorm        *gguf.TensorInfo `gguf:"blk.%d.ffn_norm.weight" shape:"n_embd"`
	FFNGate        *gguf.TensorInfo `gguf:"blk.%d.ffn_gate.weight" shape:"n_embd,n_ff"` // [n_ff][n_embd]
	FFNUp          *gguf.TensorInfo `gguf:"blk.%d.ffn_up.weight" shape:"n_embd,n_ff"`   // [n_ff][n_embd]
	FFNDown        *gguf.TensorInfo `gguf:"blk.%d.ffn_down.weight" shape:"n_ff,n_embd"` // [n_embd][n_ff]
}

func init() {
	register(&Arch{
		Name: "llama", EpsKey: "attention.layer_norm_rms_epsilon",
		Compute:    Compute{Norm: RMSNorm, Rope: RopeNormal, FFN: FFNGated, Act: ActSiLU, RopeFreqFactors: true},
		NewWeights: func(n int) any { return &Llama{Layers: make([]LlamaLayer, n)} },
	})
}

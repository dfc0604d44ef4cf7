package arch

import "github.com/llama-orch/orc/gguf"

// Qwen2 is the qwen2 architecture (Qwen2, Qwen2.5): llama with q/k/v biases,
// NeoX RoPE (no converter permutation), usually a tied LM head.
type Qwen2 struct {
	TokenEmbd  *gguf.TensorInfo `gguf:"token_embd.weight" shape:"n_embd,n_vocab"` // [n_vocab][n_embd]
	Layers     []Qwen2Layer
	OutputNorm *gguf.TensorInfo `gguf:"output_norm.weight" shape:"n_embd"`
	Output     *gguf.TensorInfo `gguf:"output.weight,optional" shape:"n_embd,n_vocab"` // absent in 0.5B: tied
}

// Qwen2Layer is one qwen2 block.
type Qwen2Layer struct {
	AttnNorm   *gguf.TensorInfo `gguf:"blk.%d.attn_norm.weight" shape:"n_embd"`
	AttnQ      *gguf.TensorInfo `gguf:"blk.%d.attn_q.weight" shape:"n_embd,n_q"` // [n_head*head_dim][n_embd]
	AttnQBias  *gguf.TensorInfo `gguf:"blk.%d.attn_q.bias" shape:"n_q"`
	AttnK      *gguf.TensorInfo `gguf:"blk.%d.attn_k.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnKBias  *gguf.TensorInfo `gguf:"blk.%d.attn_k.bias" shape:"n_kv"`
	AttnV      *gguf.TensorInfo `gguf:"blk.%d.attn_v.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnVBias  *gguf.TensorInfo `gguf:"blk.%d.attn_v.bias" shape:"n_kv"`
	AttnOutput *gguf.TensorInfo `gguf:"blk.%d.attn_output.weight" shape:"n_q,n_embd"` // [n_embd][n_head*head_dim]
	FFNNorm    *gguf.TensorInfo `gguf:"blk.%d.ffn_norm.weight" shape:"n_embd"`
	FFNGate    *gguf.TensorInfo `gguf:"blk.%d.ffn_gate.weight" shape:"n_embd,n_ff"` // [n_ff][n_embd]
	FFNUp      *gguf.TensorInfo `gguf:"blk.%d.ffn_up.weight" shape:"n_embd,n_ff"`   // [n_ff][n_embd]
	FFNDown    *gguf.TensorInfo `gguf:"blk.%d.ffn_down.weight" shape:"n_ff,n_embd"` // [n_embd][n_ff]
}

func init() {
	register(&Arch{
		Name: "qwen2", EpsKey: "attention.layer_norm_rms_epsilon",
		Compute:    Compute{Norm: RMSNorm, Rope: RopeNeoX, FFN: FFNGated, Act: ActSiLU},
		NewWeights: func(n int) any { return &Qwen2{Layers: make([]Qwen2Layer, n)} },
	})
}

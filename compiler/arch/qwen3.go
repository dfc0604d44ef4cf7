package arch

import "github.com/llama-orch/orc/gguf"

// Qwen3 is the qwen3 architecture (Qwen3 0.6B–32B): llama-like with NeoX
// RoPE, no q/k/v biases, an RMSNorm of each q and k head before RoPE, and
// a head dim (attention.key_length) independent of the hidden size.
type Qwen3 struct {
	TokenEmbd  *gguf.TensorInfo `gguf:"token_embd.weight" shape:"n_embd,n_vocab"` // [n_vocab][n_embd]
	Layers     []Qwen3Layer
	OutputNorm *gguf.TensorInfo `gguf:"output_norm.weight" shape:"n_embd"`
	Output     *gguf.TensorInfo `gguf:"output.weight,optional" shape:"n_embd,n_vocab"` // absent in 0.6B–4B: tied
}

// Qwen3Layer is one qwen3 block.
type Qwen3Layer struct {
	AttnNorm   *gguf.TensorInfo `gguf:"blk.%d.attn_norm.weight" shape:"n_embd"`
	AttnQ      *gguf.TensorInfo `gguf:"blk.%d.attn_q.weight" shape:"n_embd,n_q"`  // [n_head*head_dim][n_embd]
	AttnK      *gguf.TensorInfo `gguf:"blk.%d.attn_k.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnV      *gguf.TensorInfo `gguf:"blk.%d.attn_v.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnQNorm  *gguf.TensorInfo `gguf:"blk.%d.attn_q_norm.weight" shape:"head_dim"`
	AttnKNorm  *gguf.TensorInfo `gguf:"blk.%d.attn_k_norm.weight" shape:"head_dim"`
	AttnOutput *gguf.TensorInfo `gguf:"blk.%d.attn_output.weight" shape:"n_q,n_embd"` // [n_embd][n_head*head_dim]
	FFNNorm    *gguf.TensorInfo `gguf:"blk.%d.ffn_norm.weight" shape:"n_embd"`
	FFNGate    *gguf.TensorInfo `gguf:"blk.%d.ffn_gate.weight" shape:"n_embd,n_ff"` // [n_ff][n_embd]
	FFNUp      *gguf.TensorInfo `gguf:"blk.%d.ffn_up.weight" shape:"n_embd,n_ff"`   // [n_ff][n_embd]
	FFNDown    *gguf.TensorInfo `gguf:"blk.%d.ffn_down.weight" shape:"n_ff,n_embd"` // [n_embd][n_ff]
}

func init() {
	register(&Arch{
		Name: "qwen3", EpsKey: "attention.layer_norm_rms_epsilon",
		Compute:    Compute{Norm: RMSNorm, Rope: RopeNeoX, QKNorm: true, FFN: FFNGated, Act: ActSiLU},
		NewWeights: func(n int) any { return &Qwen3{Layers: make([]Qwen3Layer, n)} },
	})
}

package arch

import "github.com/llama-orch/orc/gguf"

// Qwen3MoE is the qwen3moe architecture (Qwen3-30B-A3B, 235B-A22B): qwen3's
// attention (q/k norm, no biases) and a mixture of SwiGLU experts without
// biases or a shared expert: softmax over all experts, the top k
// renormalised to sum 1 (norm_topk_prob).
type Qwen3MoE struct {
	TokenEmbd  *gguf.TensorInfo `gguf:"token_embd.weight" shape:"n_embd,n_vocab"` // [n_vocab][n_embd]
	Layers     []Qwen3MoELayer
	OutputNorm *gguf.TensorInfo `gguf:"output_norm.weight" shape:"n_embd"`
	Output     *gguf.TensorInfo `gguf:"output.weight,optional" shape:"n_embd,n_vocab"` // [n_vocab][n_embd]
}

// Qwen3MoELayer is one qwen3moe block.
type Qwen3MoELayer struct {
	AttnNorm    *gguf.TensorInfo `gguf:"blk.%d.attn_norm.weight" shape:"n_embd"`
	AttnQ       *gguf.TensorInfo `gguf:"blk.%d.attn_q.weight" shape:"n_embd,n_q"`  // [n_head*head_dim][n_embd]
	AttnK       *gguf.TensorInfo `gguf:"blk.%d.attn_k.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnV       *gguf.TensorInfo `gguf:"blk.%d.attn_v.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnQNorm   *gguf.TensorInfo `gguf:"blk.%d.attn_q_norm.weight" shape:"head_dim"`
	AttnKNorm   *gguf.TensorInfo `gguf:"blk.%d.attn_k_norm.weight" shape:"head_dim"`
	AttnOutput  *gguf.TensorInfo `gguf:"blk.%d.attn_output.weight" shape:"n_q,n_embd"` // [n_embd][n_head*head_dim]
	FFNNorm     *gguf.TensorInfo `gguf:"blk.%d.ffn_norm.weight" shape:"n_embd"`
	FFNGateInp  *gguf.TensorInfo `gguf:"blk.%d.ffn_gate_inp.weight" shape:"n_embd,n_expert"`           // router [n_expert][n_embd]
	FFNGateExps *gguf.TensorInfo `gguf:"blk.%d.ffn_gate_exps.weight" shape:"n_embd,n_ff_exp,n_expert"` // [n_expert][n_ff_exp][n_embd]
	FFNUpExps   *gguf.TensorInfo `gguf:"blk.%d.ffn_up_exps.weight" shape:"n_embd,n_ff_exp,n_expert"`   // [n_expert][n_ff_exp][n_embd]
	FFNDownExps *gguf.TensorInfo `gguf:"blk.%d.ffn_down_exps.weight" shape:"n_ff_exp,n_embd,n_expert"` // [n_expert][n_embd][n_ff_exp]
}

func init() {
	register(&Arch{
		Name: "qwen3moe", EpsKey: "attention.layer_norm_rms_epsilon",
		Compute: Compute{Norm: RMSNorm, Rope: RopeNeoX, QKNorm: true, FFN: FFNExperts, Act: ActSiLU,
			Experts: &Experts{Router: RouterSoftmaxTopKRenorm}},
		NewWeights: func(n int) any { return &Qwen3MoE{Layers: make([]Qwen3MoELayer, n)} },
		extra:      readExperts,
	})
}

package arch

import "github.com/llama-orch/orc/gguf"

// GPT2 is the gpt2 architecture: learned positions, LayerNorm with biases,
// fused attn_qkv with bias, GELU(tanh) MLP, multi-head attention.
type GPT2 struct {
	TokenEmbd      *gguf.TensorInfo `gguf:"token_embd.weight" shape:"n_embd,n_vocab"`  // [n_vocab][n_embd]
	PositionEmbd   *gguf.TensorInfo `gguf:"position_embd.weight" shape:"n_embd,n_ctx"` // [n_ctx][n_embd]
	Layers         []GPT2Layer
	OutputNorm     *gguf.TensorInfo `gguf:"output_norm.weight" shape:"n_embd"`
	OutputNormBias *gguf.TensorInfo `gguf:"output_norm.bias" shape:"n_embd"`
	Output         *gguf.TensorInfo `gguf:"output.weight,optional" shape:"n_embd,n_vocab"` // absent = tied
}

// GPT2Layer is one gpt2 block.
type GPT2Layer struct {
	AttnNorm       *gguf.TensorInfo `gguf:"blk.%d.attn_norm.weight" shape:"n_embd"`
	AttnNormBias   *gguf.TensorInfo `gguf:"blk.%d.attn_norm.bias" shape:"n_embd"`
	AttnQKV        *gguf.TensorInfo `gguf:"blk.%d.attn_qkv.weight" shape:"n_embd,n_qkv"` // [3*n_embd][n_embd]
	AttnQKVBias    *gguf.TensorInfo `gguf:"blk.%d.attn_qkv.bias" shape:"n_qkv"`
	AttnOutput     *gguf.TensorInfo `gguf:"blk.%d.attn_output.weight" shape:"n_q,n_embd"` // [n_embd][n_embd]
	AttnOutputBias *gguf.TensorInfo `gguf:"blk.%d.attn_output.bias" shape:"n_embd"`
	FFNNorm        *gguf.TensorInfo `gguf:"blk.%d.ffn_norm.weight" shape:"n_embd"`
	FFNNormBias    *gguf.TensorInfo `gguf:"blk.%d.ffn_norm.bias" shape:"n_embd"`
	FFNUp          *gguf.TensorInfo `gguf:"blk.%d.ffn_up.weight" shape:"n_embd,n_ff"` // [n_ff][n_embd]
	FFNUpBias      *gguf.TensorInfo `gguf:"blk.%d.ffn_up.bias" shape:"n_ff"`
	FFNDown        *gguf.TensorInfo `gguf:"blk.%d.ffn_down.weight" shape:"n_ff,n_embd"` // [n_embd][n_ff]
	FFNDownBias    *gguf.TensorInfo `gguf:"blk.%d.ffn_down.bias" shape:"n_embd"`
}

func init() {
	register(&Arch{
		Name: "gpt2", EpsKey: "attention.layer_norm_epsilon",
		Compute:    Compute{Norm: LayerNorm, Rope: RopeNone, FFN: FFNPlain, Act: ActGELUTanh},
		NewWeights: func(n int) any { return &GPT2{Layers: make([]GPT2Layer, n)} },
	})
}

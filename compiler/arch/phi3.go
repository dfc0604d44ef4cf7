package arch

import "github.com/llama-orch/orc/gguf"

// Phi3 is the phi3 architecture (Phi-3 mini/medium): fused attn_qkv (q rows,
// then k, then v), fused ffn_up = [gate; up], NeoX RoPE over rope dims,
// sliding-window attention on every layer when the file sets a window.
type Phi3 struct {
	TokenEmbd        *gguf.TensorInfo `gguf:"token_embd.weight" shape:"n_embd,n_vocab"`             // [n_vocab][n_embd]
	RopeFactorsLong  *gguf.TensorInfo `gguf:"rope_factors_long.weight,optional" shape:"rope_half"`  // 128k variants (LongRoPE)
	RopeFactorsShort *gguf.TensorInfo `gguf:"rope_factors_short.weight,optional" shape:"rope_half"` // 128k variants (LongRoPE)
	Layers           []Phi3Layer
	OutputNorm       *gguf.TensorInfo `gguf:"output_norm.weight" shape:"n_embd"`
	Output           *gguf.TensorInfo `gguf:"output.weight" shape:"n_embd,n_vocab"` // [n_vocab][n_embd]
}

// Phi3Layer is one phi3 block.
type Phi3Layer struct {
	AttnNorm   *gguf.TensorInfo `gguf:"blk.%d.attn_norm.weight" shape:"n_embd"`
	AttnQKV    *gguf.TensorInfo `gguf:"blk.%d.attn_qkv.weight" shape:"n_embd,n_qkv"`  // [(n_head+2*n_head_kv)*head_dim][n_embd]
	AttnOutput *gguf.TensorInfo `gguf:"blk.%d.attn_output.weight" shape:"n_q,n_embd"` // [n_embd][n_head*head_dim]
	FFNNorm    *gguf.TensorInfo `gguf:"blk.%d.ffn_norm.weight" shape:"n_embd"`
	FFNUp      *gguf.TensorInfo `gguf:"blk.%d.ffn_up.weight" shape:"n_embd,n_ff2"`  // [2*n_ff][n_embd]: gate rows, then up rows
	FFNDown    *gguf.TensorInfo `gguf:"blk.%d.ffn_down.weight" shape:"n_ff,n_embd"` // [n_embd][n_ff]
}

func init() {
	register(&Arch{
		Name: "phi3", EpsKey: "attention.layer_norm_rms_epsilon",
		Compute: Compute{Norm: RMSNorm, Rope: RopeNeoX, FFN: FFNGatedPacked, Act: ActSiLU,
			SlidingLayers: func(int) bool { return true }},
		NewWeights: func(n int) any { return &Phi3{Layers: make([]Phi3Layer, n)} },
	})
}

package arch

import (
	"math"

	"github.com/llama-orch/orc/gguf"
)

// Gemma3 is the gemma3 architecture (Gemma 3 text, 1B–27B): embeddings
// scaled by √n_embd; RMSNorm weights stored as 1 + w by llama.cpp's
// converter; an RMSNorm of each q and k head; norms after attention and
// after the FFN; a tanh-GELU gated FFN; five sliding-window layers (local
// RoPE base 10,000, unscaled) to one global layer (the file's base and
// linear scaling); NeoX RoPE; the LM head tied to the embeddings.
type Gemma3 struct {
	TokenEmbd  *gguf.TensorInfo `gguf:"token_embd.weight" shape:"n_embd,n_vocab"` // [n_vocab][n_embd]
	Layers     []Gemma3Layer
	OutputNorm *gguf.TensorInfo `gguf:"output_norm.weight" shape:"n_embd"`
	Output     *gguf.TensorInfo `gguf:"output.weight,optional" shape:"n_embd,n_vocab"` // absent: tied
}

// Gemma3Layer is one gemma3 block. FFNNorm is HF's pre_feedforward_layernorm.
type Gemma3Layer struct {
	AttnNorm     *gguf.TensorInfo `gguf:"blk.%d.attn_norm.weight" shape:"n_embd"`
	AttnQ        *gguf.TensorInfo `gguf:"blk.%d.attn_q.weight" shape:"n_embd,n_q"`  // [n_head*head_dim][n_embd]
	AttnK        *gguf.TensorInfo `gguf:"blk.%d.attn_k.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnV        *gguf.TensorInfo `gguf:"blk.%d.attn_v.weight" shape:"n_embd,n_kv"` // [n_head_kv*head_dim][n_embd]
	AttnQNorm    *gguf.TensorInfo `gguf:"blk.%d.attn_q_norm.weight" shape:"head_dim"`
	AttnKNorm    *gguf.TensorInfo `gguf:"blk.%d.attn_k_norm.weight" shape:"head_dim"`
	AttnOutput   *gguf.TensorInfo `gguf:"blk.%d.attn_output.weight" shape:"n_q,n_embd"` // [n_embd][n_head*head_dim]
	PostAttnNorm *gguf.TensorInfo `gguf:"blk.%d.post_attention_norm.weight" shape:"n_embd"`
	FFNNorm      *gguf.TensorInfo `gguf:"blk.%d.ffn_norm.weight" shape:"n_embd"`
	FFNGate      *gguf.TensorInfo `gguf:"blk.%d.ffn_gate.weight" shape:"n_embd,n_ff"` // [n_ff][n_embd]
	FFNUp        *gguf.TensorInfo `gguf:"blk.%d.ffn_up.weight" shape:"n_embd,n_ff"`   // [n_ff][n_embd]
	FFNDown      *gguf.TensorInfo `gguf:"blk.%d.ffn_down.weight" shape:"n_ff,n_embd"` // [n_embd][n_ff]
	PostFFNNorm  *gguf.TensorInfo `gguf:"blk.%d.post_ffw_norm.weight" shape:"n_embd"`
}

func init() {
	register(&Arch{
		Name: "gemma3", EpsKey: "attention.layer_norm_rms_epsilon",
		Compute: Compute{
			Norm: RMSNorm, NormWeight: WeightOnePlusStoredByConverter, PostNorms: true, QKNorm: true,
			Rope: RopeNeoX, LocalRope: &LocalRope{Base: 10000},
			// llama.cpp's swa pattern 6: layer i slides unless i%6 == 5.
			SlidingLayers: func(layer int) bool { return layer%6 < 5 },
			FFN:           FFNGated, Act: ActGELUTanh,
			EmbedScale: SqrtEmbd,
			// query_pre_attn_scalar^-½: the head dim, except 27B's
			// n_embd/n_head (llama.cpp keys that on the 62-layer model).
			AttnScale: func(h *Hparams) float64 {
				if h.NLayer == 62 {
					return 1 / math.Sqrt(float64(h.NEmbd/h.NHead))
				}
				return 1 / math.Sqrt(float64(h.HeadDim))
			},
		},
		NewWeights: func(n int) any { return &Gemma3{Layers: make([]Gemma3Layer, n)} },
	})
}

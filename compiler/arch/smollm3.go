package arch

// SmolLM3 is the smollm3 architecture (SmolLM3-3B): llama's blocks and
// tensors (RMSNorm, SwiGLU, grouped-query attention, RoPE on the q/k rows
// llama.cpp's converter permuted so that adjacent pairs rotate, the LM
// head tied to the embeddings), except that every fourth layer attends
// without RoPE (NoPE): llama.cpp's use_rope = (il + 1) % 4 != 0,
// transformers' no_rope_layers of no_rope_layer_interval 4. The files
// carry no key for the pattern.
func init() {
	register(&Arch{
		Name: "smollm3", EpsKey: "attention.layer_norm_rms_epsilon",
		Compute: Compute{
			Norm: RMSNorm, Rope: RopeNormal, FFN: FFNGated, Act: ActSiLU,
			RopeLayers: func(layer int) bool { return (layer+1)%4 != 0 },
		},
		NewWeights: func(n int) any { return &Llama{Layers: make([]LlamaLayer, n)} },
	})
}

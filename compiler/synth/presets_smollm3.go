package synth

import "github.com/llama-orch/orc/compiler/arch"

func smollm3H(nLayer, nEmbd, nHead, nHeadKV, nFF int) arch.Hparams {
	return arch.Hparams{Arch: "smollm3", NLayer: nLayer, NEmbd: nEmbd, NHead: nHead, NHeadKV: nHeadKV, HeadDim: nEmbd / nHead,
		NFF: nFF, NVocab: 128256, NCtx: 65536, Eps: 1e-6, RopeBase: 5e6, RopeDims: nEmbd / nHead}
}

// SmolLM3-3B and its tiny form: 4 layers, so that the last is a NoPE
// layer, and 4 query heads to 1 KV head as the real model's 16 to 4. The
// keys are llama's: llama.cpp converts SmolLM3 as a llama model.
func init() {
	presets = append(presets,
		Preset{Name: "smollm3-3b", Description: "SmolLM3-3B: 36 layers (every 4th without RoPE), 2048, 16/4 heads of 128, ffn 11008, tied head",
			H: smollm3H(36, 2048, 16, 4, 11008), Tokenizer: "hf:smollm3", Keys: llamaKeys, DefaultQuant: QuantQ4KM,
			Checks: []Check{CheckFullQ4KM, CheckBench}},
		Preset{Name: "smollm3-3b-tiny", Description: "smollm3 tiny: 4 layers (the 4th without RoPE), 256, 4/1 heads of 64, ffn 768, tied, real SmolLM3 tokenizer",
			H: smollm3H(4, 256, 4, 1, 768), Tokenizer: "hf:smollm3", Keys: llamaKeys, DefaultQuant: QuantQ4KM, Checks: goldenTinyQ4},
	)
}

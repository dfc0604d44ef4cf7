package synth

import (
	"io"
	"math"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/quant"
)

// The <arch>.* keys llama.cpp's converter writes for Qwen3, Qwen3-MoE,
// Gemma 3 and Llama 3 (Llama 3's scaling travels as rope_freqs.weight).
var (
	qwen3Keys = []string{"block_count", "context_length", "embedding_length", "feed_forward_length", "attention.head_count",
		"attention.head_count_kv", "rope.freq_base", "attention.layer_norm_rms_epsilon", "attention.key_length", "attention.value_length"}
	qwen3moeKeys = append(append([]string(nil), qwen3Keys...), "expert_used_count", "expert_count", "expert_feed_forward_length")
	gemma3Keys   = []string{"context_length", "embedding_length", "block_count", "feed_forward_length", "attention.head_count",
		"attention.layer_norm_rms_epsilon", "attention.key_length", "attention.value_length", "rope.freq_base",
		"attention.sliding_window", "attention.head_count_kv"}
	gemma3ScaledKeys = append(append([]string(nil), gemma3Keys...), "rope.scaling.type", "rope.scaling.factor")
)

// Llama3Rope is transformers' llama3 RoPE scaling, which llama.cpp's
// converter turns into rope_freqs.weight (the per-frequency divisors).
type Llama3Rope struct {
	Factor, LowFreqFactor, HighFreqFactor float64
	OrigCtx                               int
}

// Divisors are the rope_freqs values for RoPE dims dims and base base, as
// llama.cpp's converter computes them.
func (r *Llama3Rope) Divisors(dims int, base float64) []float32 {
	lowWavelen := float64(r.OrigCtx) / r.LowFreqFactor
	highWavelen := float64(r.OrigCtx) / r.HighFreqFactor
	out := make([]float32, dims/2)
	for i := range out {
		freq := 1 / math.Pow(base, float64(2*i)/float64(dims))
		switch wavelen := 2 * math.Pi / freq; {
		case wavelen < highWavelen:
			out[i] = 1
		case wavelen > lowWavelen:
			out[i] = float32(r.Factor)
		default:
			smooth := (float64(r.OrigCtx)/wavelen - r.LowFreqFactor) / (r.HighFreqFactor - r.LowFreqFactor)
			out[i] = float32(1 / ((1-smooth)/r.Factor + smooth))
		}
	}
	return out
}

// ropeFreqsName is the tensor Llama3Rope fills instead of random data.
const ropeFreqsName = "rope_freqs.weight"

// writeRopeFreqs writes the preset's rope_freqs.weight (F32).
func writeRopeFreqs(w io.Writer, p *Preset) error {
	enc, err := quant.Quantize(gguf.F32, p.Llama3Rope.Divisors(p.H.RopeDims, p.H.RopeBase))
	if err != nil {
		return err
	}
	_, err = w.Write(enc)
	return err
}

func qwen3H(nLayer, nEmbd, nHead, nHeadKV, headDim, nFF int) arch.Hparams {
	return arch.Hparams{Arch: "qwen3", NLayer: nLayer, NEmbd: nEmbd, NHead: nHead, NHeadKV: nHeadKV, HeadDim: headDim,
		NFF: nFF, NVocab: 151936, NCtx: 40960, Eps: 1e-6, RopeBase: 1e6, RopeDims: headDim}
}

func qwen3moeH(nLayer, nEmbd, nHead, nHeadKV, headDim, nFF, nExpert, nUsed, expertFF int) arch.Hparams {
	h := qwen3H(nLayer, nEmbd, nHead, nHeadKV, headDim, nFF)
	h.Arch, h.NExpert, h.NExpertUsed, h.ExpertFF = "qwen3moe", nExpert, nUsed, expertFF
	return h
}

func gemma3H(nLayer, nEmbd, nHead, nHeadKV, headDim, nFF, nVocab, nCtx, window int, linear float64) arch.Hparams {
	h := arch.Hparams{Arch: "gemma3", NLayer: nLayer, NEmbd: nEmbd, NHead: nHead, NHeadKV: nHeadKV, HeadDim: headDim,
		NFF: nFF, NVocab: nVocab, NCtx: nCtx, Eps: 1e-6, RopeBase: 1e6, RopeDims: headDim, SlidingWindow: window}
	if linear != 0 {
		h.Scaling = arch.RopeScaling{Type: "linear", Factor: linear}
	}
	return h
}

func llama3H(nLayer, nEmbd, nHead, nHeadKV, headDim, nFF int) arch.Hparams {
	return arch.Hparams{Arch: "llama", NLayer: nLayer, NEmbd: nEmbd, NHead: nHead, NHeadKV: nHeadKV, HeadDim: headDim,
		NFF: nFF, NVocab: 128256, NCtx: 131072, Eps: 1e-5, RopeBase: 500000, RopeDims: headDim}
}

var (
	llama31Rope = &Llama3Rope{Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OrigCtx: 8192}
	llama32Rope = &Llama3Rope{Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OrigCtx: 8192}
)

// The tiny variants keep what makes each architecture itself: Qwen3's head
// dim apart from the hidden size, Qwen3-MoE's K-quant experts (ffn_down_exps
// Q6_K on the last layer), Gemma 3's five sliding layers and a global one
// with linear scaling, a window shorter than the reference prompts and a
// hidden size off the 256-blocks as 1B's 1152, Llama 3's rope_freqs.
func init() {
	presets = append(presets,
		Preset{Name: "qwen3-0.6b", Description: "Qwen3-0.6B: 28 layers, 1024, 16/8 heads of 128, ffn 3072, tied head",
			H: qwen3H(28, 1024, 16, 8, 128, 3072), Tokenizer: "hf:qwen3", Keys: qwen3Keys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckFullF16, CheckFullQ4KM}},
		Preset{Name: "qwen3-8b", Description: "Qwen3-8B: 36 layers, 4096, 32/8 heads of 128, ffn 12288",
			H: qwen3H(36, 4096, 32, 8, 128, 12288), Optional: []string{"output.weight"}, Tokenizer: "hf:qwen3", Keys: qwen3Keys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckFullQ4KM, CheckBench}},
		Preset{Name: "qwen3-tiny", Description: "qwen3 tiny: 2 layers, 256, 4/2 heads of 128, ffn 768, tied, real Qwen3 tokenizer",
			H: qwen3H(2, 256, 4, 2, 128, 768), Tokenizer: "hf:qwen3", Keys: qwen3Keys, DefaultQuant: QuantQ4KM, Checks: goldenTinyQ4},
		Preset{Name: "qwen3-30b-a3b", Description: "Qwen3-30B-A3B: 48 layers, 2048, 32/4 heads of 128, 128 experts top-8 of 768",
			H: qwen3moeH(48, 2048, 32, 4, 128, 6144, 128, 8, 768), Optional: []string{"output.weight"}, Tokenizer: "hf:qwen3", Keys: qwen3moeKeys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckBench}},
		Preset{Name: "qwen3-30b-a3b-tiny", Description: "qwen3moe tiny: 2 layers, 256, 4/2 heads of 64, 16 experts top-4 of 256, real Qwen3 tokenizer",
			H: qwen3moeH(2, 256, 4, 2, 64, 768, 16, 4, 256), Optional: []string{"output.weight"}, Tokenizer: "hf:qwen3", Keys: qwen3moeKeys, DefaultQuant: QuantQ4KM, Checks: goldenTinyQ4},
		Preset{Name: "gemma-3-1b", Description: "Gemma-3-1B: 26 layers, 1152, 4/1 heads of 256, ffn 6912, window 512, tied head",
			H: gemma3H(26, 1152, 4, 1, 256, 6912, 262144, 32768, 512, 0), Tokenizer: "hf:gemma3", Keys: gemma3Keys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckFullF16, CheckFullQ4KM}},
		Preset{Name: "gemma-3-4b", Description: "Gemma-3-4B (text): 34 layers, 2560, 8/4 heads of 256, ffn 10240, window 1024, linear RoPE ×8 on global layers",
			H: gemma3H(34, 2560, 8, 4, 256, 10240, 262208, 131072, 1024, 8), Tokenizer: "hf:gemma3", Keys: gemma3ScaledKeys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckBench}},
		Preset{Name: "gemma-3-tiny", Description: "gemma3 tiny: 6 layers (5 sliding, window 8, 1 global, linear RoPE ×8), 192, 4/1 heads of 64, ffn 512, real Gemma 3 tokenizer",
			H: gemma3H(6, 192, 4, 1, 64, 512, 262144, 8192, 8, 8), Tokenizer: "hf:gemma3", Keys: gemma3ScaledKeys, DefaultQuant: QuantQ4KM, Checks: goldenTinyQ4},
		Preset{Name: "llama-3.2-1b", Description: "Llama-3.2-1B: 16 layers, 2048, 32/8 heads of 64, ffn 8192, llama3 RoPE ×32, tied head",
			H: llama3H(16, 2048, 32, 8, 64, 8192), Optional: []string{ropeFreqsName}, Llama3Rope: llama32Rope,
			Tokenizer: "hf:llama3", Keys: llamaKeys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckFullF16, CheckFullQ4KM}},
		Preset{Name: "llama-3.1-8b", Description: "Llama-3.1-8B: 32 layers, 4096, 32/8 heads of 128, ffn 14336, llama3 RoPE ×8",
			H: llama3H(32, 4096, 32, 8, 128, 14336), Optional: []string{ropeFreqsName, "output.weight"}, Llama3Rope: llama31Rope,
			Tokenizer: "hf:llama3", Keys: llamaKeys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckFullQ4KM, CheckBench}},
		Preset{Name: "llama-3.2-1b-tiny", Description: "llama3 tiny: 2 layers, 256, 4/2 heads of 64, ffn 768, llama3 RoPE ×32, tied, real Llama 3 tokenizer",
			H: llama3H(2, 256, 4, 2, 64, 768), Optional: []string{ropeFreqsName}, Llama3Rope: llama32Rope,
			Tokenizer: "hf:llama3", Keys: llamaKeys, DefaultQuant: QuantQ4KM, Checks: goldenTinyQ4},
	)
}

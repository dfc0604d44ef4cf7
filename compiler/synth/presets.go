package synth

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llama-orch/orc/compiler/arch"
)

// Preset is a model shape: hyperparameters, which of its architecture's
// optional tensors it has, the tokenizer it carries and the <arch>.* keys
// its real GGUF conversion writes.
type Preset struct {
	Name        string
	Description string
	H           arch.Hparams
	// Optional lists the optional tensors (by name, without the layer for
	// per-layer ones, e.g. "output.weight") the model has.
	Optional []string
	// Tokenizer names the embedded tokenizer: "hf:<name>" for a
	// tokenizer.json, "gguf:<name>" for a vocab-only GGUF.
	Tokenizer string
	// Keys are the <arch>.* hyperparameter keys written, in order.
	Keys         []string
	DefaultQuant Quant
	// Llama3Rope, when set, fills rope_freqs.weight (an Optional tensor)
	// with its divisors instead of random data.
	Llama3Rope *Llama3Rope
	// Checks are the GPU-host checks that take the preset.
	Checks []Check
}

var (
	llamaKeys = []string{"context_length", "embedding_length", "block_count", "feed_forward_length", "rope.dimension_count",
		"attention.head_count", "attention.head_count_kv", "attention.layer_norm_rms_epsilon", "rope.freq_base"}
	qwen2Keys = []string{"block_count", "context_length", "embedding_length", "feed_forward_length", "attention.head_count",
		"attention.head_count_kv", "rope.freq_base", "attention.layer_norm_rms_epsilon"}
	phi3Keys = []string{"context_length", "rope.scaling.original_context_length", "embedding_length", "feed_forward_length",
		"block_count", "attention.head_count", "attention.head_count_kv", "attention.layer_norm_rms_epsilon",
		"rope.dimension_count", "rope.freq_base", "attention.sliding_window"}
	gpt2Keys   = []string{"block_count", "context_length", "embedding_length", "feed_forward_length", "attention.head_count", "attention.layer_norm_epsilon"}
	gptossKeys = []string{"block_count", "context_length", "embedding_length", "feed_forward_length", "attention.head_count",
		"attention.head_count_kv", "rope.freq_base", "attention.layer_norm_rms_epsilon", "expert_count", "expert_used_count",
		"attention.key_length", "attention.value_length", "attention.sliding_window", "expert_feed_forward_length",
		"rope.scaling.type", "rope.scaling.factor", "rope.scaling.original_context_length"}
)

func qwen2H(nLayer, nEmbd, nHead, nHeadKV, nFF, nCtx int) arch.Hparams {
	return arch.Hparams{Arch: "qwen2", NLayer: nLayer, NEmbd: nEmbd, NHead: nHead, NHeadKV: nHeadKV, HeadDim: nEmbd / nHead,
		NFF: nFF, NVocab: 151936, NCtx: nCtx, Eps: 1e-6, RopeBase: 1e6, RopeDims: nEmbd / nHead, TiedOutput: true}
}

func phi3H(nLayer, nEmbd, nHead, nFF, window int) arch.Hparams {
	return arch.Hparams{Arch: "phi3", NLayer: nLayer, NEmbd: nEmbd, NHead: nHead, NHeadKV: nHead, HeadDim: nEmbd / nHead,
		NFF: nFF, NVocab: 32064, NCtx: 4096, Eps: 1e-5, RopeBase: 10000, RopeDims: nEmbd / nHead, SlidingWindow: window,
		Scaling: arch.RopeScaling{OrigCtx: 4096}}
}

func gpt2H(nLayer, nEmbd, nHead, nCtx int) arch.Hparams {
	return arch.Hparams{Arch: "gpt2", NLayer: nLayer, NEmbd: nEmbd, NHead: nHead, NHeadKV: nHead, HeadDim: nEmbd / nHead,
		NFF: 4 * nEmbd, NVocab: 50257, NCtx: nCtx, Eps: 1e-5}
}

func gptossH(nLayer, nEmbd, nHead, nHeadKV, nExpert, nUsed, nFF, nCtx, origCtx int) arch.Hparams {
	return arch.Hparams{Arch: "gpt-oss", NLayer: nLayer, NEmbd: nEmbd, NHead: nHead, NHeadKV: nHeadKV, HeadDim: 64,
		NFF: nFF, NVocab: 201088, NCtx: nCtx, Eps: 1e-5, RopeBase: 150000, RopeDims: 64, SlidingWindow: 128,
		NExpert: nExpert, NExpertUsed: nUsed, ExpertFF: nFF,
		Scaling: arch.RopeScaling{Type: "yarn", Factor: 32, OrigCtx: origCtx, BetaFast: 32, BetaSlow: 1}}
}

// Tiny variants keep 2 layers and small dims so they run in seconds on the
// CPU, with head_dim 64. Rows are multiples of 256 where the real model's
// are (K-quants exercised) and deliberately not where the real model's are
// not (qwen2's 896 and gpt-oss's 2880: the Q5_0/Q8_0 fallbacks exercised).
var presets = []Preset{
	{Name: "qwen2.5-0.5b", Description: "Qwen2.5-0.5B: 24 layers, 896, 14/2 heads, ffn 4864, tied head",
		H: qwen2H(24, 896, 14, 2, 4864, 32768), Tokenizer: "hf:qwen2.5", Keys: qwen2Keys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckFullF16, CheckFullQ4_0, CheckFullQ4KM}},
	{Name: "qwen2.5-0.5b-tiny", Description: "qwen2 tiny: 2 layers, 128, 2/1 heads, ffn 512, real Qwen2.5 tokenizer",
		H: qwen2H(2, 128, 2, 1, 512, 4096), Tokenizer: "hf:qwen2.5", Keys: qwen2Keys, DefaultQuant: QuantQ4KM, Checks: goldenTiny},
	{Name: "phi-3-mini-4k", Description: "Phi-3-mini-4k: 32 layers, 3072, 32 heads of 96, ffn 8192",
		H: phi3H(32, 3072, 32, 8192, 2047), Tokenizer: "gguf:phi-3", Keys: phi3Keys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckFullQ4KM}},
	{Name: "phi-3-mini-4k-tiny", Description: "phi3 tiny: 2 layers, 256, 4 heads of 64, ffn 512, real Phi-3 vocab",
		H: phi3H(2, 256, 4, 512, 2047), Tokenizer: "gguf:phi-3", Keys: phi3Keys, DefaultQuant: QuantQ4KM, Checks: goldenTiny},
	{Name: "gpt-oss-20b", Description: "gpt-oss-20b: 24 layers, 2880, 64/8 heads of 64, 32 experts top-4, YaRN",
		H: gptossH(24, 2880, 64, 8, 32, 4, 2880, 131072, 4096), Tokenizer: "hf:gpt-oss", Keys: gptossKeys, DefaultQuant: QuantMXFP4},
	{Name: "gpt-oss-20b-2l", Description: "gpt-oss-20b cut to 2 layers (real widths): one sliding and one full layer, checked against transformers",
		H: gptossH(2, 2880, 64, 8, 32, 4, 2880, 131072, 4096), Tokenizer: "hf:gpt-oss", Keys: gptossKeys, DefaultQuant: QuantMXFP4},
	{Name: "gpt-oss-20b-tiny", Description: "gpt-oss tiny: 2 layers, 192, 4/2 heads of 64, 4 experts top-2 of 256, real o200k tokenizer",
		H: gptossH(2, 192, 4, 2, 4, 2, 256, 8192, 256), Tokenizer: "hf:gpt-oss", Keys: gptossKeys, DefaultQuant: QuantMXFP4, Checks: []Check{CheckGoldenF32}},
	{Name: "gpt2-small", Description: "GPT-2 small: 12 layers, 768, 12 heads, ffn 3072, learned positions",
		H: gpt2H(12, 768, 12, 1024), Optional: []string{"output.weight"}, Tokenizer: "gguf:gpt-2", Keys: gpt2Keys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckFullF16, CheckFullQ4KM}},
	{Name: "gpt2-small-tiny", Description: "gpt2 tiny: 2 layers, 256, 4 heads, ffn 1024, real GPT-2 vocab",
		H: gpt2H(2, 256, 4, 1024), Optional: []string{"output.weight"}, Tokenizer: "gguf:gpt-2", Keys: gpt2Keys, DefaultQuant: QuantQ4KM, Checks: goldenTiny},
	{Name: "llama-2-7b", Description: "Llama-2-7B: 32 layers, 4096, 32 heads of 128, ffn 11008, Llama-2 SentencePiece vocab",
		H: arch.Hparams{Arch: "llama", NLayer: 32, NEmbd: 4096, NHead: 32, NHeadKV: 32, HeadDim: 128, NFF: 11008, NVocab: 32000,
			NCtx: 4096, Eps: 1e-5, RopeBase: 10000, RopeDims: 128},
		Optional: []string{"output.weight"}, Tokenizer: "gguf:llama-spm", Keys: llamaKeys, DefaultQuant: QuantQ4KM, Checks: []Check{CheckFullQ4KM}},
	{Name: "llama-tiny", Description: "llama tiny: 2 layers, 256, 4/2 heads of 64, ffn 768, Llama-2 SentencePiece vocab",
		H: arch.Hparams{Arch: "llama", NLayer: 2, NEmbd: 256, NHead: 4, NHeadKV: 2, HeadDim: 64, NFF: 768, NVocab: 32000,
			NCtx: 2048, Eps: 1e-5, RopeBase: 10000, RopeDims: 64},
		Optional: []string{"output.weight"}, Tokenizer: "gguf:llama-spm", Keys: llamaKeys, DefaultQuant: QuantQ4KM, Checks: goldenTiny},
}

// Presets returns every preset, sorted by name.
func Presets() []Preset {
	out := append([]Preset(nil), presets...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a preset by name.
func Lookup(name string) (*Preset, error) {
	for i := range presets {
		if presets[i].Name == name {
			p := presets[i]
			return &p, nil
		}
	}
	names := make([]string, len(presets))
	for i, p := range Presets() {
		names[i] = p.Name
	}
	return nil, fmt.Errorf("synth: unknown preset %q (available: %s)", name, strings.Join(names, ", "))
}

// Cut returns the preset with only its first n layers: real widths, heads,
// vocabulary and tokenizer, for checks whose reference side (the CPU
// device) cannot afford the whole depth. Weights are drawn per tensor name,
// so the kept layers are the whole model's.
func (p Preset) Cut(n int) (*Preset, error) {
	if n < 1 || n > p.H.NLayer {
		return nil, fmt.Errorf("synth: preset %s has %d layers, cannot keep %d", p.Name, p.H.NLayer, n)
	}
	p.H.NLayer = n
	p.Description = fmt.Sprintf("%s (first %d layers)", p.Description, n)
	return &p, nil
}

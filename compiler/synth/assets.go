package synth

import (
	"embed"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The real tokenizers travel inside the binary, zstd-compressed, so that
// synthesis works on a fresh machine without ../shared: the Hugging Face
// tokenizer.json (and tokenizer_config.json, for the chat template and
// special tokens an --hf-dir export needs) of Qwen2.5, Qwen3, Gemma 3,
// Llama 3.1 and gpt-oss, and llama.cpp's vocab-only GGUFs of GPT-2, Phi-3
// and Llama (SentencePiece), whose tokenizer.ggml.* keys are copied as they
// are. assets/NOTICE.md names where each came from and under which terms.
//
//go:embed assets/*.zst
var assets embed.FS

var (
	decoderOnce sync.Once
	decoder     *zstd.Decoder
	decoderErr  error
)

// asset returns the decompressed bytes of assets/<name>.zst.
func asset(name string) ([]byte, error) {
	raw, err := assets.ReadFile("assets/" + name + ".zst")
	if err != nil {
		return nil, fmt.Errorf("synth: no embedded asset %q", name)
	}
	decoderOnce.Do(func() { decoder, decoderErr = zstd.NewReader(nil) })
	if decoderErr != nil {
		return nil, decoderErr
	}
	out, err := decoder.DecodeAll(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("synth: asset %s: %w", name, err)
	}
	return out, nil
}

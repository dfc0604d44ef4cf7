package tokenizer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/llama-orch/orc/gguf"
)

// SpecFromFile reads a tokenizer from a GGUF model (its tokenizer.ggml.*
// metadata) or, for a path ending in .json, a Hugging Face tokenizer.json,
// with the tokenizer_config.json beside it where there is one.
func SpecFromFile(path string) (*Spec, error) {
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		s, err := SpecFromHFJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		configPath := filepath.Join(filepath.Dir(path), "tokenizer_config.json")
		config, err := os.ReadFile(configPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			if err := s.ApplyHFConfig(config); err != nil {
				return nil, fmt.Errorf("%s: %w", configPath, err)
			}
		}
		return s, nil
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := SpecFromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

package synth

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/tokenizer"
)

// writeTokenizer stores the preset's real tokenizer under tokenizer.ggml.*,
// its token list padded to the model's vocabulary as the real conversion
// pads it ("[PAD<id>]", type unused), so that the vocabulary size in the
// hyperparameters equals the tokenizer's.
func writeTokenizer(w *gguf.Writer, p *Preset) error {
	kind, name, _ := strings.Cut(p.Tokenizer, ":")
	switch kind {
	case "hf":
		spec, err := hfSpec(name)
		if err != nil {
			return err
		}
		if err := padVocab(spec, p.H.NVocab); err != nil {
			return fmt.Errorf("synth: preset %s: %w", p.Name, err)
		}
		spec.WriteGGUF(w)
		return nil
	case "gguf":
		data, err := asset("vocab-" + name + ".gguf")
		if err != nil {
			return err
		}
		f, err := gguf.Parse(data)
		if err != nil {
			return fmt.Errorf("synth: vocab %s: %w", name, err)
		}
		toks, _ := f.Strings("tokenizer.ggml.tokens")
		if len(toks) != p.H.NVocab {
			return fmt.Errorf("synth: preset %s: vocab %s has %d tokens, the model %d", p.Name, name, len(toks), p.H.NVocab)
		}
		for _, kv := range f.KVs {
			if strings.HasPrefix(kv.Key, "tokenizer.") {
				w.Set(kv.Key, kv.Value)
			}
		}
		return nil
	}
	return fmt.Errorf("synth: preset %s: bad tokenizer reference %q", p.Name, p.Tokenizer)
}

var (
	hfSpecsMu sync.Mutex
	hfSpecs   = map[string]*tokenizer.Spec{}
)

// hfSpec converts an embedded tokenizer.json (with its
// tokenizer_config.json, for the chat template and special tokens, where
// there is one) once per process (gpt-oss's takes seconds) and returns a
// copy the caller may pad.
func hfSpec(name string) (*tokenizer.Spec, error) {
	hfSpecsMu.Lock()
	defer hfSpecsMu.Unlock()
	s, ok := hfSpecs[name]
	if !ok {
		data, err := asset(name + "-tokenizer.json")
		if err != nil {
			return nil, err
		}
		if s, err = tokenizer.SpecFromHFJSON(data); err != nil {
			return nil, fmt.Errorf("synth: tokenizer %s: %w", name, err)
		}
		if config, err := asset(name + "-tokenizer_config.json"); err == nil {
			if err := s.ApplyHFConfig(config); err != nil {
				return nil, fmt.Errorf("synth: tokenizer %s: %w", name, err)
			}
		}
		hfSpecs[name] = s
	}
	c := *s
	c.Tokens = slices.Clone(s.Tokens)
	c.TokenTypes = slices.Clone(s.TokenTypes)
	c.Scores = slices.Clone(s.Scores)
	c.EOSIDs = slices.Clone(s.EOSIDs)
	return &c, nil
}

// padVocab fits the tokenizer to a vocabulary of n. Added tokens past n are
// dropped, as llama.cpp's converter ignores added tokens whose id is out of
// range (Gemma 3 1B's vocabulary of 262144 has no room for
// <image_soft_token>, id 262144).
func padVocab(s *tokenizer.Spec, n int) error {
	for len(s.Tokens) > n && s.TokenTypes[len(s.Tokens)-1] != tokenizer.TypeNormal && !s.IsSpecialID(int32(len(s.Tokens)-1)) {
		s.Tokens, s.TokenTypes = s.Tokens[:len(s.Tokens)-1], s.TokenTypes[:len(s.TokenTypes)-1]
		if s.Scores != nil {
			s.Scores = s.Scores[:len(s.Scores)-1]
		}
	}
	if len(s.Tokens) > n {
		return fmt.Errorf("tokenizer has %d tokens, more than the vocabulary of %d", len(s.Tokens), n)
	}
	for i := len(s.Tokens); i < n; i++ {
		s.Tokens = append(s.Tokens, fmt.Sprintf("[PAD%d]", i))
		s.TokenTypes = append(s.TokenTypes, tokenizer.TypeUnused)
		if s.Scores != nil {
			s.Scores = append(s.Scores, -1000) // the converter's score for padding
		}
	}
	return nil
}

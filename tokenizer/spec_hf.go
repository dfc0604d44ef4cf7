package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
)

// hfTokenizer is the part of a Hugging Face tokenizer.json we read.
type hfTokenizer struct {
	AddedTokens []hfAddedToken  `json:"added_tokens"`
	Normalizer  *hfNormalizer   `json:"normalizer"`
	PreTok      *hfPreTokenizer `json:"pre_tokenizer"`
	Model       struct {
		Type         string           `json:"type"`
		Vocab        map[string]int64 `json:"vocab"`
		Merges       json.RawMessage  `json:"merges"`
		IgnoreMerges bool             `json:"ignore_merges"`
		ByteFallback bool             `json:"byte_fallback"`
	} `json:"model"`
}

type hfAddedToken struct {
	ID      int64  `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
}

type hfNormalizer struct {
	Type        string         `json:"type"`
	Normalizers []hfNormalizer `json:"normalizers"`
}

type hfPreTokenizer struct {
	Type          string           `json:"type"`
	Pretokenizers []hfPreTokenizer `json:"pretokenizers"`
	Pattern       struct {
		Regex  string `json:"Regex"`
		String string `json:"String"`
	} `json:"pattern"`
	Behavior       string `json:"behavior"`
	Invert         bool   `json:"invert"`
	UseRegex       bool   `json:"use_regex"`
	AddPrefixSpace bool   `json:"add_prefix_space"`
}

// SpecFromHFJSON reads a Hugging Face tokenizer.json with a byte-level BPE
// model. tokenizer.json does not say which tokens are bos/eos or which chat
// format the model uses; they are recognised from the added tokens of the
// supported families (Qwen ChatML, gpt-oss Harmony, GPT-2).
func SpecFromHFJSON(data []byte) (*Spec, error) {
	var hf hfTokenizer
	if err := json.Unmarshal(data, &hf); err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: %w", err)
	}
	if hf.Model.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer: tokenizer.json model type %q is not supported (want BPE)", hf.Model.Type)
	}
	if hf.Model.ByteFallback {
		return nil, fmt.Errorf("tokenizer: tokenizer.json BPE with byte_fallback (SentencePiece-style) is not supported; use the GGUF vocabulary")
	}
	s := &Spec{Kind: KindHFJSON, Model: ModelGPT2, BOS: -1, EOS: -1, PAD: -1, UNK: -1, IgnoreMerges: hf.Model.IgnoreMerges}
	var err error
	if s.Normalizer, err = hfNormalizerName(hf.Normalizer); err != nil {
		return nil, err
	}
	if s.Pre, s.PreRegex, err = hfPreName(hf.PreTok); err != nil {
		return nil, err
	}
	if err := s.setHFVocab(&hf); err != nil {
		return nil, err
	}
	if s.Merges, err = hfMerges(hf.Model.Merges); err != nil {
		return nil, err
	}
	s.setHFSpecials()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// setHFVocab lays vocab and added tokens out by id; ids nobody uses become
// "[PAD<id>]" of type unused, as llama.cpp's converter does.
func (s *Spec) setHFVocab(hf *hfTokenizer) error {
	n := int64(0)
	for tok, id := range hf.Model.Vocab {
		if id < 0 || id >= 1<<21 {
			return fmt.Errorf("tokenizer: tokenizer.json token %q has id %d", tok, id)
		}
		n = max(n, id+1)
	}
	for _, a := range hf.AddedTokens {
		if a.ID < 0 || a.ID >= 1<<21 {
			return fmt.Errorf("tokenizer: tokenizer.json added token %q has id %d", a.Content, a.ID)
		}
		n = max(n, a.ID+1)
	}
	s.Tokens = make([]string, n)
	s.TokenTypes = make([]int32, n)
	filled := make([]bool, n)
	for tok, id := range hf.Model.Vocab {
		if filled[id] {
			return fmt.Errorf("tokenizer: tokenizer.json id %d is used twice", id)
		}
		s.Tokens[id], s.TokenTypes[id], filled[id] = tok, TypeNormal, true
	}
	for _, a := range hf.AddedTokens {
		if filled[a.ID] && s.Tokens[a.ID] != a.Content {
			return fmt.Errorf("tokenizer: tokenizer.json added token %q reuses id %d of %q", a.Content, a.ID, s.Tokens[a.ID])
		}
		s.Tokens[a.ID], filled[a.ID] = a.Content, true
		s.TokenTypes[a.ID] = TypeUserDefined
		if a.Special || looksSpecial(a.Content) {
			s.TokenTypes[a.ID] = TypeControl
		}
	}
	for i := range s.Tokens {
		if !filled[i] {
			s.Tokens[i], s.TokenTypes[i] = fmt.Sprintf("[PAD%d]", i), TypeUnused
		}
	}
	return nil
}

// looksSpecial is llama.cpp's converter rule that types <|...|> added tokens
// as control even when tokenizer.json calls them not special.
func looksSpecial(t string) bool {
	return t == "<pad>" || t == "<mask>" || (strings.HasPrefix(t, "<|") && strings.HasSuffix(t, "|>"))
}

// setHFSpecials recognises the special ids and chat format of the supported
// families from their added tokens.
func (s *Spec) setHFSpecials() {
	id := map[string]int32{}
	for i, t := range s.Tokens {
		if s.TokenTypes[i] == TypeControl {
			id[t] = int32(i)
		}
	}
	has := func(t string) bool { _, ok := id[t]; return ok }
	switch {
	case has("<|start|>") && has("<|channel|>") && has("<|return|>"):
		// gpt-oss: tokenizer_config.json's bos/eos/pad; generation_config's
		// eos_token_id list [<|return|>, <|endoftext|>, <|call|>].
		s.Chat = ChatHarmony
		s.BOS, s.EOS, s.PAD = id["<|startoftext|>"], id["<|return|>"], id["<|endoftext|>"]
		s.EOSIDs = []int32{id["<|endoftext|>"], id["<|call|>"]}
	case has("<|im_start|>") && has("<|im_end|>"):
		// Qwen2.5 instruct: bos = pad = <|endoftext|> (never added), eos = <|im_end|>.
		s.Chat = ChatChatML
		s.BOS, s.EOS, s.PAD = id["<|endoftext|>"], id["<|im_end|>"], id["<|endoftext|>"]
		s.EOSIDs = []int32{id["<|endoftext|>"]}
	case has("<|endoftext|>"):
		s.BOS, s.EOS = id["<|endoftext|>"], id["<|endoftext|>"]
	}
}

func hfNormalizerName(n *hfNormalizer) (string, error) {
	if n == nil {
		return "", nil
	}
	switch n.Type {
	case "NFC":
		return "nfc", nil
	case "Sequence":
		if len(n.Normalizers) == 0 {
			return "", nil
		}
		if len(n.Normalizers) == 1 {
			return hfNormalizerName(&n.Normalizers[0])
		}
	}
	return "", fmt.Errorf("tokenizer: tokenizer.json normalizer %q is not supported (want none or NFC)", n.Type)
}

// hfPreName maps the pre-tokenizer to one of the hand-written splitters: a
// Split by a known regex followed by a ByteLevel without its own regex, or a
// lone ByteLevel with the GPT-2 regex.
func hfPreName(p *hfPreTokenizer) (name, regex string, err error) {
	if p == nil {
		return "", "", fmt.Errorf("tokenizer: tokenizer.json has no pre_tokenizer; byte-level BPE needs one")
	}
	if p.Type == "ByteLevel" && p.UseRegex && !p.AddPrefixSpace {
		return "gpt-2", splitters["gpt-2"].regex, nil
	}
	if p.Type == "Sequence" && len(p.Pretokenizers) == 2 {
		split, bl := p.Pretokenizers[0], p.Pretokenizers[1]
		if split.Type == "Split" && split.Behavior == "Isolated" && !split.Invert && bl.Type == "ByteLevel" && !bl.UseRegex && !bl.AddPrefixSpace {
			for name, sp := range splitters {
				if sp.regex == split.Pattern.Regex {
					return name, sp.regex, nil
				}
			}
			return "", "", fmt.Errorf("tokenizer: tokenizer.json split regex %q has no hand-written splitter", split.Pattern.Regex)
		}
	}
	return "", "", fmt.Errorf("tokenizer: tokenizer.json pre_tokenizer %q is not supported (want Split+ByteLevel or ByteLevel)", p.Type)
}

// hfMerges reads the merges, either ["a b", ...] (older files) or
// [["a", "b"], ...], as "a b" strings.
func hfMerges(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var pairs [][]string
	if err := json.Unmarshal(raw, &pairs); err == nil {
		out := make([]string, len(pairs))
		for i, p := range pairs {
			if len(p) != 2 {
				return nil, fmt.Errorf("tokenizer: tokenizer.json merge %d has %d parts, want 2", i, len(p))
			}
			out[i] = p[0] + " " + p[1]
		}
		return out, nil
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json merges are neither strings nor pairs: %w", err)
	}
	for i, m := range out {
		if strings.Count(m, " ") != 1 {
			return nil, fmt.Errorf("tokenizer: tokenizer.json merge %d %q is not two parts", i, m)
		}
	}
	return out, nil
}

package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// hfTokenizer is the part of a Hugging Face tokenizer.json we read.
type hfTokenizer struct {
	AddedTokens []hfAddedToken   `json:"added_tokens"`
	Normalizer  *hfNormalizer    `json:"normalizer"`
	PreTok      *hfPreTokenizer  `json:"pre_tokenizer"`
	PostProc    *hfPostProcessor `json:"post_processor"`
	Model       struct {
		Type         string           `json:"type"`
		Vocab        map[string]int64 `json:"vocab"`
		Merges       json.RawMessage  `json:"merges"`
		IgnoreMerges bool             `json:"ignore_merges"`
		ByteFallback bool             `json:"byte_fallback"`
		UnkToken     *string          `json:"unk_token"`
	} `json:"model"`
}

type hfAddedToken struct {
	ID      int64  `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
}

// hfPattern is a Split or Replace pattern: a literal string or a regex.
type hfPattern struct {
	Regex  string `json:"Regex"`
	String string `json:"String"`
}

type hfNormalizer struct {
	Type        string         `json:"type"`
	Normalizers []hfNormalizer `json:"normalizers"`
	Pattern     hfPattern      `json:"pattern"` // Replace
	Content     string         `json:"content"` // Replace
}

type hfPreTokenizer struct {
	Type           string           `json:"type"`
	Pretokenizers  []hfPreTokenizer `json:"pretokenizers"`
	Pattern        hfPattern        `json:"pattern"`
	Behavior       string           `json:"behavior"`
	Invert         bool             `json:"invert"`
	UseRegex       bool             `json:"use_regex"`
	AddPrefixSpace bool             `json:"add_prefix_space"`
}

// hfPostProcessor is read for the token a TemplateProcessing puts before
// every single sequence (bos).
type hfPostProcessor struct {
	Type       string            `json:"type"`
	Processors []hfPostProcessor `json:"processors"`
	Single     []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
	} `json:"single"`
}

// SpecFromHFJSON reads a Hugging Face tokenizer.json: a byte-level BPE
// model (GPT-2, Qwen, Llama 3, gpt-oss), or a SentencePiece-style BPE with
// byte fallback whose normaliser turns spaces into ▁ (Gemma 3).
// tokenizer.json does not say which tokens end a turn or which chat format
// the model uses; they are recognised from the added tokens of the supported
// families (ApplyHFConfig adds what tokenizer_config.json says).
func SpecFromHFJSON(data []byte) (*Spec, error) {
	var hf hfTokenizer
	if err := json.Unmarshal(data, &hf); err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: %w", err)
	}
	if hf.Model.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer: tokenizer.json model type %q is not supported (want BPE)", hf.Model.Type)
	}
	s := &Spec{Kind: KindHFJSON, BOS: -1, EOS: -1, PAD: -1, UNK: -1}
	var err error
	if hf.Model.ByteFallback {
		err = s.setHFSentencePiece(&hf)
	} else {
		err = s.setHFByteLevel(&hf)
	}
	if err != nil {
		return nil, err
	}
	s.setHFBOS(hf.PostProc)
	s.setHFSpecials()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// setHFByteLevel reads a byte-level BPE: the pre-tokenizer regex, NFC, the
// merges by rank.
func (s *Spec) setHFByteLevel(hf *hfTokenizer) error {
	s.Model, s.IgnoreMerges = ModelGPT2, hf.Model.IgnoreMerges
	var err error
	if s.Normalizer, err = hfNormalizerName(hf.Normalizer); err != nil {
		return err
	}
	if s.Pre, s.PreRegex, err = hfPreName(hf.PreTok); err != nil {
		return err
	}
	if err := s.setHFVocab(hf); err != nil {
		return err
	}
	pairs, err := hfMergePairs(hf.Model.Merges)
	if err != nil {
		return err
	}
	s.Merges = make([]string, len(pairs))
	for i, p := range pairs {
		if strings.Contains(p[0], " ") || strings.Contains(p[1], " ") {
			return fmt.Errorf("tokenizer: tokenizer.json merge %d %q has a space inside a part", i, p)
		}
		s.Merges[i] = p[0] + " " + p[1]
	}
	return nil
}

// setHFSentencePiece reads Gemma's form of a SentencePiece BPE: spaces
// replaced by ▁ (no ▁ prepended, no other splitting), merges by rank,
// characters without a token spelled as <0xNN> byte tokens. It becomes the
// "llama" model llama.cpp's converter writes, whose merge order is a score
// per token; see mergeScores.
func (s *Spec) setHFSentencePiece(hf *hfTokenizer) error {
	if n := hf.Normalizer; n == nil || n.Type != "Replace" || n.Pattern.String != " " || n.Content != spaceMark {
		return fmt.Errorf("tokenizer: tokenizer.json BPE with byte_fallback is supported with Gemma's normalizer (Replace \" \" by \"▁\") only")
	}
	// After the normaliser there are no spaces left, so Gemma's Split on " "
	// splits nothing.
	if p := hf.PreTok; p != nil && !(p.Type == "Split" && p.Pattern.String == " ") {
		return fmt.Errorf("tokenizer: tokenizer.json BPE with byte_fallback and pre_tokenizer %q is not supported (want none or Split on \" \")", p.Type)
	}
	s.Model, s.Pre = ModelLlama, "default"
	if err := s.setHFVocab(hf); err != nil {
		return err
	}
	for id, t := range s.Tokens {
		if s.TokenTypes[id] == TypeNormal && isByteToken(t) {
			s.TokenTypes[id] = TypeByte
		}
	}
	if u := hf.Model.UnkToken; u != nil {
		if id := slices.Index(s.Tokens, *u); id >= 0 {
			s.UNK, s.TokenTypes[id] = int32(id), TypeUnknown
		}
	}
	pairs, err := hfMergePairs(hf.Model.Merges)
	if err != nil {
		return err
	}
	s.Scores, err = mergeScores(s.Tokens, s.TokenTypes, pairs)
	return err
}

// mergeScores turns merge ranks into SentencePiece scores. llama.cpp merges
// the adjacent pair whose joined token scores highest; Hugging Face merges
// the pair of lowest rank, and its converter ranks merges by the score of
// the joined token, each token's merges together. So a token's score is
// minus the rank of the first merge that makes it, and both orders agree.
// Tokens no merge makes keep 0 (added, byte) or score below every merge
// (single characters: never the result of a merge, so never compared).
func mergeScores(tokens []string, types []int32, pairs [][2]string) ([]float32, error) {
	id := make(map[string]int, len(tokens))
	for i, t := range tokens {
		if _, dup := id[t]; !dup {
			id[t] = i
		}
	}
	scores := make([]float32, len(tokens))
	made := make([]bool, len(tokens))
	for rank, p := range pairs {
		_, lok := id[p[0]]
		_, rok := id[p[1]]
		res, resok := id[p[0]+p[1]]
		if !lok || !rok || !resok {
			return nil, fmt.Errorf("tokenizer: tokenizer.json merge %d %q names a token outside the vocabulary", rank, p)
		}
		if !made[res] {
			made[res], scores[res] = true, -float32(rank)
		}
	}
	for i := range scores {
		if !made[i] && types[i] == TypeNormal {
			scores[i] = -float32(len(pairs))
		}
	}
	return scores, nil
}

// isByteToken reports whether t is a SentencePiece byte token <0xNN>.
func isByteToken(t string) bool {
	if len(t) != 6 || !strings.HasPrefix(t, "<0x") || t[5] != '>' {
		return false
	}
	for _, c := range t[3:5] {
		if !strings.ContainsRune("0123456789ABCDEF", c) {
			return false
		}
	}
	return true
}

// setHFBOS reads bos from a TemplateProcessing post-processor (alone or in
// a Sequence) that puts a special token before every sequence: that model
// expects bos (Gemma's <bos>, Llama 3's <|begin_of_text|>).
func (s *Spec) setHFBOS(p *hfPostProcessor) {
	if p == nil {
		return
	}
	for _, sub := range p.Processors {
		s.setHFBOS(&sub)
	}
	if p.Type != "TemplateProcessing" || len(p.Single) == 0 || p.Single[0].SpecialToken == nil {
		return
	}
	if id := slices.Index(s.Tokens, p.Single[0].SpecialToken.ID); id >= 0 {
		s.BOS, s.AddBOS = int32(id), true
	}
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
// families from their added tokens (each chat format's Vocab), else a lone
// <|endoftext|> as bos and eos.
func (s *Spec) setHFSpecials() {
	v := hfVocab{}
	for i, t := range s.Tokens {
		if s.TokenTypes[i] == TypeControl || s.TokenTypes[i] == TypeUserDefined || s.TokenTypes[i] == TypeUnknown {
			v[t] = int32(i)
		}
	}
	for _, f := range chatFormatsByPrecedence() {
		if f.Vocab != nil && f.Vocab(s, v) {
			return
		}
	}
	if v.has("<|endoftext|>") {
		s.BOS, s.EOS = v["<|endoftext|>"], v["<|endoftext|>"]
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

// hfMergePairs reads the merges, either ["a b", ...] (older files) or
// [["a", "b"], ...].
func hfMergePairs(raw json.RawMessage) ([][2]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var lists [][]string
	if err := json.Unmarshal(raw, &lists); err == nil {
		out := make([][2]string, len(lists))
		for i, p := range lists {
			if len(p) != 2 {
				return nil, fmt.Errorf("tokenizer: tokenizer.json merge %d has %d parts, want 2", i, len(p))
			}
			out[i] = [2]string{p[0], p[1]}
		}
		return out, nil
	}
	var joined []string
	if err := json.Unmarshal(raw, &joined); err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json merges are neither strings nor pairs: %w", err)
	}
	out := make([][2]string, len(joined))
	for i, m := range joined {
		l, r, ok := strings.Cut(m, " ")
		if !ok || strings.Contains(r, " ") {
			return nil, fmt.Errorf("tokenizer: tokenizer.json merge %d %q is not two parts", i, m)
		}
		out[i] = [2]string{l, r}
	}
	return out, nil
}

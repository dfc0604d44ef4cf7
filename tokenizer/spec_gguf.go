package tokenizer

import (
	"fmt"

	"github.com/llama-orch/orc/gguf"
)

// GGUF keys of the tokenizer, as llama.cpp's converter writes them.
const (
	keyModel        = "tokenizer.ggml.model"
	keyPre          = "tokenizer.ggml.pre"
	keyTokens       = "tokenizer.ggml.tokens"
	keyTokenType    = "tokenizer.ggml.token_type"
	keyMerges       = "tokenizer.ggml.merges"
	keyScores       = "tokenizer.ggml.scores"
	keyBOS          = "tokenizer.ggml.bos_token_id"
	keyEOS          = "tokenizer.ggml.eos_token_id"
	keyEOSIDs       = "tokenizer.ggml.eos_token_ids"
	keyEOT          = "tokenizer.ggml.eot_token_id"
	keyEOM          = "tokenizer.ggml.eom_token_id"
	keyUNK          = "tokenizer.ggml.unknown_token_id"
	keyPAD          = "tokenizer.ggml.padding_token_id"
	keyAddBOS       = "tokenizer.ggml.add_bos_token"
	keyAddEOS       = "tokenizer.ggml.add_eos_token"
	keySpacePrefix  = "tokenizer.ggml.add_space_prefix"
	keyChatTemplate = "tokenizer.chat_template"
)

// SpecFromGGUF reads the tokenizer.ggml.* metadata of a GGUF file.
func SpecFromGGUF(f *gguf.File) (*Spec, error) {
	s := &Spec{Kind: KindGGUF, BOS: -1, EOS: -1, PAD: -1, UNK: -1}
	var ok bool
	if s.Model, ok = f.String(keyModel); !ok {
		return nil, fmt.Errorf("tokenizer: %s is missing", keyModel)
	}
	if s.Tokens, ok = f.Strings(keyTokens); !ok {
		return nil, fmt.Errorf("tokenizer: %s is missing or not a string array", keyTokens)
	}
	n := len(s.Tokens)
	if types, ok := f.Ints(keyTokenType); ok {
		s.TokenTypes = make([]int32, len(types))
		for i, t := range types {
			s.TokenTypes[i] = int32(t)
		}
	} else {
		// Old files (stories260K) may lack types: every token is normal.
		s.TokenTypes = make([]int32, n)
		for i := range s.TokenTypes {
			s.TokenTypes[i] = TypeNormal
		}
	}
	if len(s.TokenTypes) != n {
		return nil, fmt.Errorf("tokenizer: %d token types for %d tokens", len(s.TokenTypes), n)
	}
	switch s.Model {
	case ModelGPT2:
		if s.Merges, ok = f.Strings(keyMerges); !ok {
			return nil, fmt.Errorf("tokenizer: %s is missing for a gpt2 tokenizer", keyMerges)
		}
		pre, _ := f.String(keyPre)
		if s.Pre, ok = canonicalPre(pre); !ok {
			return nil, fmt.Errorf("tokenizer: unsupported %s %q", keyPre, pre)
		}
		s.PreRegex = splitters[s.Pre].regex
		s.IgnoreMerges = splitters[s.Pre].ignoreMerges
		// llama.cpp adds bos for Llama 3's pre-tokenizer unless the file
		// says otherwise.
		s.AddBOS = s.Pre == "llama-bpe"
		// Qwen2 was trained on NFC-normalised text (its tokenizer.json has an
		// NFC normaliser), so the GGUF path normalises too and both agree.
		if s.Pre == "qwen2" {
			s.Normalizer = "nfc"
		}
	case ModelLlama:
		if s.Scores, ok = f.Float32s(keyScores); !ok {
			return nil, fmt.Errorf("tokenizer: %s is missing for a llama tokenizer", keyScores)
		}
		s.Pre, _ = f.String(keyPre)
		s.AddBOS = true
		s.AddSpacePrefix = true
	default:
		return nil, fmt.Errorf("tokenizer: unsupported %s %q (want gpt2 or llama)", keyModel, s.Model)
	}
	if b, ok := f.Bool(keyAddBOS); ok {
		s.AddBOS = b
	}
	if b, ok := f.Bool(keyAddEOS); ok {
		s.AddEOS = b
	}
	if b, ok := f.Bool(keySpacePrefix); ok {
		s.AddSpacePrefix = b
	}
	for key, dst := range map[string]*int32{keyBOS: &s.BOS, keyEOS: &s.EOS, keyPAD: &s.PAD, keyUNK: &s.UNK} {
		if v, ok := f.Uint(key); ok {
			if v >= uint64(n) {
				return nil, fmt.Errorf("tokenizer: %s = %d outside vocabulary of %d", key, v, n)
			}
			*dst = int32(v)
		}
	}
	if ids, ok := f.Ints(keyEOSIDs); ok {
		for _, id := range ids {
			if id < 0 || id >= int64(n) {
				return nil, fmt.Errorf("tokenizer: %s has id %d outside vocabulary of %d", keyEOSIDs, id, n)
			}
			s.EOSIDs = append(s.EOSIDs, int32(id))
		}
	}
	for _, key := range []string{keyEOT, keyEOM} {
		if v, ok := f.Uint(key); ok && v < uint64(n) {
			s.EOSIDs = append(s.EOSIDs, int32(v))
		}
	}
	s.EOSIDs = append(s.EOSIDs, endOfTurnIDs(s.Tokens, s.TokenTypes)...)
	s.EOSIDs = dedupe(s.EOSIDs)
	arch, _ := f.String("general.architecture")
	if v, ok := f.Uint(arch + ".context_length"); ok && arch != "" {
		s.ContextLength = int(v)
	}
	s.ChatTemplate, _ = f.String(keyChatTemplate)
	s.Chat = chatKind(s.ChatTemplate, arch)
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// WriteGGUF stores the spec under the tokenizer.ggml.* keys in the order and
// types llama.cpp's converter uses.
func (s *Spec) WriteGGUF(w *gguf.Writer) {
	w.Set(keyModel, s.Model)
	if s.Model == ModelGPT2 || s.Pre != "" {
		w.Set(keyPre, s.Pre)
	}
	w.Set(keyTokens, s.Tokens)
	w.Set(keyTokenType, s.TokenTypes)
	if s.Model == ModelGPT2 {
		w.Set(keyMerges, s.Merges)
	}
	if s.Model == ModelLlama {
		w.Set(keyScores, s.Scores)
	}
	for _, kv := range []struct {
		key string
		id  int32
	}{{keyBOS, s.BOS}, {keyEOS, s.EOS}, {keyUNK, s.UNK}, {keyPAD, s.PAD}} {
		if kv.id >= 0 {
			w.Set(kv.key, uint32(kv.id))
		}
	}
	if s.Chat == ChatHarmony && len(s.EOSIDs) > 0 {
		ids := make([]uint32, 0, len(s.EOSIDs)+1)
		for _, id := range s.StopIDs() {
			ids = append(ids, uint32(id))
		}
		w.Set(keyEOSIDs, ids)
	}
	w.Set(keyAddBOS, s.AddBOS)
	w.Set(keyAddEOS, s.AddEOS)
	if s.Model == ModelLlama && !s.AddSpacePrefix {
		w.Set(keySpacePrefix, false)
	}
	if s.ChatTemplate != "" {
		w.Set(keyChatTemplate, s.ChatTemplate)
	}
}

// endOfTurnText lists control tokens that end a turn, which llama.cpp also
// treats as end of generation whatever eos says (Phi-3's eos is
// <|endoftext|> but a reply ends with <|end|>).
var endOfTurnText = []string{"<|im_end|>", "<|end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|return|>", "<|call|>", "<end_of_turn>"}

func endOfTurnIDs(tokens []string, types []int32) []int32 {
	byText := map[string]int32{}
	for i, t := range tokens {
		if types[i] == TypeControl || types[i] == TypeUserDefined {
			byText[t] = int32(i)
		}
	}
	var out []int32
	for _, t := range endOfTurnText {
		id, ok := byText[t]
		if !ok {
			continue
		}
		// In Harmony <|end|> closes one message (analysis) and the reply
		// goes on; generation ends at <|return|> or <|call|>.
		if _, harmony := byText["<|return|>"]; harmony && t == "<|end|>" {
			continue
		}
		out = append(out, id)
	}
	return out
}

func dedupe(ids []int32) []int32 {
	seen := map[int32]bool{}
	out := ids[:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

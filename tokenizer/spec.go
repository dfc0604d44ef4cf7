// Package tokenizer turns text into token ids and back exactly as the models
// were trained: byte-level BPE (GPT-2, Qwen2/3, Llama 3, gpt-oss) and
// SentencePiece BPE (Llama-2, Phi-3, Gemma 3), read from GGUF metadata or a
// Hugging Face tokenizer.json.
// A Spec is the plain, serialisable description a plan stores; New builds the
// working tokenizer from it.
package tokenizer

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// Spec kinds: where the vocabulary came from.
const (
	KindGGUF   = "gguf-bpe" // tokenizer.ggml.* metadata of a GGUF file
	KindHFJSON = "hf-json"  // a Hugging Face tokenizer.json
)

// Spec models (tokenizer.ggml.model values).
const (
	ModelGPT2  = "gpt2"  // byte-level BPE ranked by merges
	ModelLlama = "llama" // SentencePiece BPE ranked by scores, <0xNN> byte fallback
)

// Token types as llama.cpp stores them in tokenizer.ggml.token_type.
const (
	TypeNormal      int32 = 1
	TypeUnknown     int32 = 2
	TypeControl     int32 = 3
	TypeUserDefined int32 = 4
	TypeUnused      int32 = 5
	TypeByte        int32 = 6
)

// Chat template kinds (see RenderChat).
const (
	ChatNone    = ""
	ChatChatML  = "chatml"  // Qwen2.5
	ChatQwen3   = "qwen3"   // ChatML with <think> reasoning
	ChatPhi3    = "phi3"    // Phi-3 mini
	ChatHarmony = "harmony" // gpt-oss
	ChatGemma   = "gemma"   // Gemma 3: <start_of_turn>, system folded into the first user turn
	ChatLlama3  = "llama3"  // Llama 3: <|start_header_id|> headers, <|eot_id|>
	// Llama 3.1 and 3.3: Llama 3 with a system turn always first, holding
	// the knowledge cutoff and the fixed date "26 Jul 2024".
	ChatLlama31 = "llama3.1"
	// Llama 3.2: as 3.1, dated today (the template's strftime_now).
	ChatLlama32 = "llama3.2"
)

// Spec holds everything needed to rebuild a tokenizer. Token ids index
// Tokens, TokenTypes and Scores. Added/special tokens are the tokens typed
// TypeControl (matched as whole strings only when the caller asks for
// special-token parsing) and TypeUserDefined (always matched), as llama.cpp
// does.
type Spec struct {
	Kind  string `msgpack:"kind"`
	Model string `msgpack:"model"`
	// Pre names the pre-tokenizer split (tokenizer.ggml.pre: qwen2, gpt-2,
	// gpt-4o, llama-bpe, default); PreRegex is the regex it implements, kept
	// for inspection (the splitters are hand-written).
	Pre      string `msgpack:"pre"`
	PreRegex string `msgpack:"pre_regex,omitempty"`
	// Normalizer is "nfc" when text is NFC-normalised before splitting
	// (Qwen2's tokenizer.json), else empty.
	Normalizer string `msgpack:"normalizer,omitempty"`
	// IgnoreMerges: a pre-token that is itself a vocabulary entry is emitted
	// whole without running merges (tokenizer.json's ignore_merges, gpt-oss
	// and Llama-3).
	IgnoreMerges bool `msgpack:"ignore_merges,omitempty"`

	Tokens     []string  `msgpack:"tokens"`
	TokenTypes []int32   `msgpack:"token_types"`
	Merges     []string  `msgpack:"merges,omitempty"` // "left right", rank = index (gpt2)
	Scores     []float32 `msgpack:"scores,omitempty"` // (llama)

	// Special ids; -1 when the model has none.
	BOS int32 `msgpack:"bos"`
	EOS int32 `msgpack:"eos"`
	PAD int32 `msgpack:"pad"`
	UNK int32 `msgpack:"unk"`
	// EOSIDs are further end-of-generation ids (gpt-oss's
	// tokenizer.ggml.eos_token_ids, end-of-turn tokens).
	EOSIDs []int32 `msgpack:"eos_ids,omitempty"`
	AddBOS bool    `msgpack:"add_bos"`
	AddEOS bool    `msgpack:"add_eos"`
	// AddSpacePrefix: SentencePiece's leading-space rule (prepend ▁ to text
	// at the start and after each special token).
	AddSpacePrefix bool `msgpack:"add_space_prefix"`

	ContextLength int    `msgpack:"context_length,omitempty"` // 0 when unknown
	Chat          string `msgpack:"chat"`                     // one of the Chat* kinds
	ChatTemplate  string `msgpack:"chat_template,omitempty"`  // the model's jinja text, kept for WriteGGUF
}

// Marshal serialises the spec with msgpack.
func (s *Spec) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("tokenizer: encode spec: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalSpec reads a spec written by Marshal and checks it.
func UnmarshalSpec(data []byte) (*Spec, error) {
	var s Spec
	if err := msgpack.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("tokenizer: decode spec: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Load rebuilds a tokenizer from a spec written by Marshal, as a plan
// stores it.
func Load(data []byte) (Tokenizer, error) {
	s, err := UnmarshalSpec(data)
	if err != nil {
		return nil, err
	}
	return New(s)
}

// StopIDs returns every id that ends generation: eos and EOSIDs, deduplicated.
func (s *Spec) StopIDs() []int32 {
	var out []int32
	seen := map[int32]bool{}
	for _, id := range append([]int32{s.EOS}, s.EOSIDs...) {
		if id >= 0 && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// IsSpecialID reports whether id is bos, eos, pad, unk or a stop id.
func (s *Spec) IsSpecialID(id int32) bool {
	return id == s.BOS || id == s.EOS || id == s.PAD || id == s.UNK || slices.Contains(s.EOSIDs, id)
}

// Validate checks that the arrays agree and every id is in range, so that a
// corrupt plan or file fails here with a clear message instead of panicking
// later.
func (s *Spec) Validate() error {
	switch s.Kind {
	case KindGGUF, KindHFJSON:
	default:
		return fmt.Errorf("tokenizer: unknown spec kind %q", s.Kind)
	}
	n := len(s.Tokens)
	if n == 0 {
		return fmt.Errorf("tokenizer: spec has no tokens")
	}
	if len(s.TokenTypes) != n {
		return fmt.Errorf("tokenizer: %d token types for %d tokens", len(s.TokenTypes), n)
	}
	switch s.Model {
	case ModelGPT2:
		if _, ok := splitters[s.Pre]; !ok {
			return fmt.Errorf("tokenizer: unsupported pre-tokenizer %q for model gpt2", s.Pre)
		}
	case ModelLlama:
		if len(s.Scores) != n {
			return fmt.Errorf("tokenizer: %d scores for %d tokens", len(s.Scores), n)
		}
	default:
		return fmt.Errorf("tokenizer: unsupported tokenizer model %q", s.Model)
	}
	for name, id := range map[string]int32{"bos": s.BOS, "eos": s.EOS, "pad": s.PAD, "unk": s.UNK} {
		if id < -1 || int(id) >= n {
			return fmt.Errorf("tokenizer: %s id %d outside vocabulary of %d", name, id, n)
		}
	}
	for _, id := range s.EOSIDs {
		if id < 0 || int(id) >= n {
			return fmt.Errorf("tokenizer: stop id %d outside vocabulary of %d", id, n)
		}
	}
	if _, ok := chatFormats[s.Chat]; !ok && s.Chat != ChatNone {
		return fmt.Errorf("tokenizer: unknown chat template kind %q", s.Chat)
	}
	return nil
}

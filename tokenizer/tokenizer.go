package tokenizer

import (
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer turns text into ids and back. Encode never adds bos: callers
// prepend Info().BOS when Info().AddBOS says the model expects it.
type Tokenizer interface {
	// Encode tokenizes text. With parseSpecial, control tokens written in
	// the text (<|im_start|>, <s>...) become their ids; without it they are
	// tokenized as plain text. User-defined added tokens always match.
	Encode(text string, parseSpecial bool) []int32
	// EncodeChat tokenizes a rendered chat prompt: control tokens are
	// parsed where the template wrote them, never in message content.
	EncodeChat(p ChatPrompt) []int32
	// Decode renders ids as a whole text, special tokens included; bytes
	// that do not form valid UTF-8 become U+FFFD. As llama.cpp and HF do,
	// SentencePiece's leading space (added by Encode) is removed from the
	// first token.
	Decode(ids []int32) string
	// NewStream starts a streaming decoder for tokens that continue a
	// prompt: every token keeps its leading space.
	NewStream() *Stream
	Info() Info
}

// Info is what the runtime and server need to know about a tokenizer.
type Info struct {
	Kind          string // KindGGUF or KindHFJSON
	Model         string // ModelGPT2 or ModelLlama
	VocabSize     int
	BOS, EOS      int32   // -1 when absent
	StopIDs       []int32 // every id that ends generation (eos first)
	AddBOS        bool    // the model expects bos before the prompt
	ContextLength int     // 0 when unknown
	Chat          string  // chat template kind for RenderChat
}

// engine is the part that differs between models: how one fragment of plain
// text (between special tokens) becomes ids.
type engine interface {
	encodeFragment(text string, afterSpecial bool, out []int32) []int32
}

type tokenizer struct {
	spec    *Spec
	info    Info
	engine  engine
	special specialMatcher
	pieces  [][]byte // [n_vocab] bytes each token decodes to
	// stripFirstSpace: SentencePiece's ▁ prefix added at encode time is
	// removed from the first decoded token.
	stripFirstSpace bool
	nfc             bool
}

// New builds a tokenizer from its spec.
func New(s *Spec) (Tokenizer, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	t := &tokenizer{spec: s, nfc: s.Normalizer == "nfc"}
	t.info = Info{Kind: s.Kind, Model: s.Model, VocabSize: len(s.Tokens), BOS: s.BOS, EOS: s.EOS,
		StopIDs: s.StopIDs(), AddBOS: s.AddBOS, ContextLength: s.ContextLength, Chat: s.Chat}
	switch s.Normalizer {
	case "", "nfc":
	default:
		return nil, fmt.Errorf("tokenizer: unknown normalizer %q", s.Normalizer)
	}
	var err error
	switch s.Model {
	case ModelGPT2:
		var b *byteBPE
		if b, err = newByteBPE(s); err == nil {
			t.engine, t.pieces = b, b.pieces()
		}
	case ModelLlama:
		var sp *sentencePiece
		if sp, err = newSentencePiece(s); err == nil {
			t.engine, t.pieces = sp, sp.pieces()
			t.stripFirstSpace = s.AddSpacePrefix
		}
	}
	if err != nil {
		return nil, err
	}
	t.special = newSpecialMatcher(s)
	return t, nil
}

func (t *tokenizer) Info() Info { return t.info }

func (t *tokenizer) Encode(text string, parseSpecial bool) []int32 {
	return t.encode(text, func(int, int) bool { return parseSpecial })
}

func (t *tokenizer) EncodeChat(p ChatPrompt) []int32 { return t.encode(p.Text, p.markup) }

// encode tokenizes text; a control token written in it becomes its id where
// control(offset, length) allows it, else it is plain text.
func (t *tokenizer) encode(text string, control func(at, n int) bool) []int32 {
	var out []int32
	afterSpecial := true // the start of text counts as following a special token
	for pos := 0; pos < len(text); {
		rest := text[pos:]
		at, n, id := t.special.find(rest, func(i, n int) bool { return control(pos+i, n) })
		frag := rest[:at]
		if frag != "" {
			if t.nfc {
				frag = norm.NFC.String(frag)
			}
			out = t.engine.encodeFragment(frag, afterSpecial, out)
			afterSpecial = false
		}
		if n == 0 {
			break
		}
		out = append(out, id)
		afterSpecial = true
		pos += at + n
		if t.special.rstrip[id] {
			pos = len(text) - len(strings.TrimLeft(text[pos:], " \t\n\r\v\f"))
		}
	}
	return out
}

func (t *tokenizer) Decode(ids []int32) string {
	s := &Stream{t: t, stripSpace: t.stripFirstSpace}
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(s.Add(id))
	}
	b.WriteString(s.Flush())
	return b.String()
}

func (t *tokenizer) NewStream() *Stream { return &Stream{t: t} }

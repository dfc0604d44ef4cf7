package tokenizer

import (
	"slices"
	"strings"
)

// chatFormat declares one chat template kind in one place: how it renders,
// how a model's jinja text is recognised, which architectures use it when
// a file carries no template, how its reply separates reasoning, and which
// special ids a tokenizer.json of its family has. Each format registers
// itself from the file that renders it.
type chatFormat struct {
	Kind   string
	Render func(b *chatBuilder, msgs []Message, opt ChatOptions) error
	// Reply is the reply format (ReplyPlain when empty).
	Reply string
	// Detect recognises the kind's jinja text (has reports a substring).
	Detect func(has func(string) bool) bool
	// Precedence orders detection, of the template and of the vocabulary:
	// the highest that matches wins (a ChatML template with <think> is
	// Qwen3's, so Qwen3 ranks above ChatML).
	Precedence int
	// Archs use the kind when their file carries no template.
	Archs []string
	// Vocab, when the family's added tokens are all in v, sets the spec's
	// chat kind and special ids and reports true.
	Vocab func(s *Spec, v hfVocab) bool
}

var chatFormats = map[string]*chatFormat{}

func registerChat(f *chatFormat) { chatFormats[f.Kind] = f }

// chatFormatsByPrecedence lists the formats, highest precedence first.
func chatFormatsByPrecedence() []*chatFormat {
	out := make([]*chatFormat, 0, len(chatFormats))
	for _, f := range chatFormats {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *chatFormat) int { return b.Precedence - a.Precedence })
	return out
}

// chatKind picks the Go chat template from the model's jinja text, or from
// its architecture when the file carries none.
func chatKind(template, arch string) string {
	has := func(t string) bool { return strings.Contains(template, t) }
	formats := chatFormatsByPrecedence()
	for _, f := range formats {
		if f.Detect != nil && f.Detect(has) {
			return f.Kind
		}
	}
	if template != "" {
		return ChatNone
	}
	for _, f := range formats {
		if slices.Contains(f.Archs, arch) {
			return f.Kind
		}
	}
	return ChatNone
}

// hfVocab is a tokenizer.json's added tokens by text.
type hfVocab map[string]int32

// has reports whether every token t is an added token.
func (v hfVocab) has(t ...string) bool {
	for _, x := range t {
		if _, ok := v[x]; !ok {
			return false
		}
	}
	return true
}

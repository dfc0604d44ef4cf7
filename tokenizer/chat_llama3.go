package tokenizer

import (
	"strings"
	"unicode"
)

// renderLlama3 is Llama 3's template: bos written before the first
// message, each message (any role) under a <|start_header_id|> header with
// its text trimmed and closed by <|eot_id|>.
func renderLlama3(b *chatBuilder, msgs []Message, addGenerationPrompt bool) {
	for i, m := range msgs {
		if i == 0 {
			b.markup("<|begin_of_text|>")
		}
		b.markup("<|start_header_id|>", m.Role, "<|end_header_id|>\n\n")
		b.text(trimPython(m.Content))
		b.markup("<|eot_id|>")
	}
	if addGenerationPrompt {
		b.markup("<|start_header_id|>assistant<|end_header_id|>\n\n")
	}
}

// trimPython is jinja's trim filter as transformers runs it: Python's
// str.strip(), whose whitespace is Go's plus the separators U+001C–U+001F.
func trimPython(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
}

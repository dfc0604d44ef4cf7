package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
)

func init() {
	registerChat(&chatFormat{
		Kind: ChatLlama3, Precedence: 20,
		Render: func(b *chatBuilder, msgs []Message, opt ChatOptions) error {
			renderLlama3(b, msgs, opt.GenerationPrompt)
			return nil
		},
		Detect: func(has func(string) bool) bool { return has("<|start_header_id|>") },
		Vocab: func(s *Spec, v hfVocab) bool {
			if !v.has("<|begin_of_text|>", "<|start_header_id|>", "<|eot_id|>") {
				return false
			}
			// Llama 3.x instruct: eos = <|eot_id|>; generation_config's
			// eos_token_id [<|end_of_text|>, <|eom_id|>, <|eot_id|>].
			s.Chat = ChatLlama3
			s.EOS = v["<|eot_id|>"]
			for _, t := range []string{"<|end_of_text|>", "<|eom_id|>"} {
				if v.has(t) {
					s.EOSIDs = append(s.EOSIDs, v[t])
				}
			}
			return true
		},
	})
	registerChat(&chatFormat{
		Kind: ChatLlama31, Precedence: 30,
		Render: func(b *chatBuilder, msgs []Message, opt ChatOptions) error {
			renderLlama31(b, msgs, "26 Jul 2024", opt.GenerationPrompt)
			return nil
		},
		Detect: func(has func(string) bool) bool {
			return has("<|start_header_id|>") && has("Cutting Knowledge Date")
		},
	})
	registerChat(&chatFormat{
		Kind: ChatLlama32, Precedence: 40,
		Render: func(b *chatBuilder, msgs []Message, opt ChatOptions) error {
			renderLlama31(b, msgs, chatNow().Format("02 Jan 2006"), opt.GenerationPrompt)
			return nil
		},
		Detect: func(has func(string) bool) bool {
			return has("<|start_header_id|>") && has("Cutting Knowledge Date") && has("strftime_now")
		},
	})
}

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

// renderLlama31 is Llama 3.1's template (3.2's and 3.3's too, dated as
// they date it) without tools: bos, then a system turn that is always
// there, holding the knowledge cutoff, the date and the trimmed system
// message; then the turns as in Llama 3, tool results under an ipython
// header as a JSON string (the template's tojson: a string is iterable).
func renderLlama31(b *chatBuilder, msgs []Message, date string, addGenerationPrompt bool) {
	b.markup("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n",
		"Cutting Knowledge Date: December 2023\nToday Date: ", date, "\n\n")
	if len(msgs) > 0 && msgs[0].Role == "system" {
		b.text(trimPython(msgs[0].Content))
		msgs = msgs[1:]
	}
	b.markup("<|eot_id|>")
	for _, m := range msgs {
		if m.Role == "tool" {
			b.markup("<|start_header_id|>ipython<|end_header_id|>\n\n")
			b.text(pythonJSONString(m.Content))
		} else {
			b.markup("<|start_header_id|>", m.Role, "<|end_header_id|>\n\n")
			b.text(trimPython(m.Content))
		}
		b.markup("<|eot_id|>")
	}
	if addGenerationPrompt {
		b.markup("<|start_header_id|>assistant<|end_header_id|>\n\n")
	}
}

// pythonJSONString is a string as transformers' tojson filter writes it:
// Python's json.dumps with ensure_ascii=False.
func pythonJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// trimPython is jinja's trim filter as transformers runs it: Python's
// str.strip(), whose whitespace is Go's plus the separators U+001C–U+001F.
func trimPython(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
}

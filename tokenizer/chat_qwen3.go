package tokenizer

import "strings"

func init() {
	registerChat(&chatFormat{
		Kind: ChatQwen3, Precedence: 70, Archs: []string{"qwen3", "qwen3moe"}, Reply: ReplyThink,
		Render: func(b *chatBuilder, msgs []Message, opt ChatOptions) error {
			renderQwen3(b, msgs, opt)
			return nil
		},
		Detect: func(has func(string) bool) bool { return has("<|im_start|>") && has("<think>") },
		Vocab: func(s *Spec, v hfVocab) bool {
			// Qwen3 reasons inside <think>…</think>.
			if !v.has("<|im_start|>", "<|im_end|>", "<think>", "</think>") {
				return false
			}
			s.Chat = ChatQwen3
			setQwenSpecials(s, v)
			return true
		},
	})
}

// renderQwen3 is Qwen3's template without tools: no default system
// message; an assistant turn after the last user query keeps its reasoning
// in a <think> block (the last turn always has one, empty or not), earlier
// ones lose it; reasoning comes from Thinking or, failing that, from a
// <think>…</think> the content carries; other roles (developer) are not
// rendered, as in the template. With NoThinking the generation prompt holds
// an empty <think> block, so the model answers at once.
func renderQwen3(b *chatBuilder, msgs []Message, opt ChatOptions) {
	if len(msgs) > 0 && msgs[0].Role == "system" {
		b.markup("<|im_start|>system\n")
		b.text(msgs[0].Content)
		b.markup("<|im_end|>\n")
	}
	lastQuery := len(msgs) - 1
	for i := len(msgs) - 1; i >= 0; i-- {
		c := msgs[i].Content
		if msgs[i].Role == "user" && !(strings.HasPrefix(c, "<tool_response>") && strings.HasSuffix(c, "</tool_response>")) {
			lastQuery = i
			break
		}
	}
	for i, m := range msgs {
		switch {
		case m.Role == "user" || (m.Role == "system" && i > 0):
			b.markup("<|im_start|>", m.Role, "\n")
			b.text(m.Content)
			b.markup("<|im_end|>\n")
		case m.Role == "assistant":
			content, reasoning := splitThinking(m)
			b.markup("<|im_start|>assistant\n")
			if i > lastQuery && (i == len(msgs)-1 || reasoning != "") {
				b.markup("<think>\n")
				b.text(strings.Trim(reasoning, "\n"))
				b.markup("\n</think>\n\n")
				content = strings.TrimLeft(content, "\n")
			}
			b.text(content)
			b.markup("<|im_end|>\n")
		case m.Role == "tool":
			renderToolResponse(b, msgs, i)
		}
	}
	if opt.GenerationPrompt {
		b.markup("<|im_start|>assistant\n")
		if opt.NoThinking {
			b.markup("<think>\n\n</think>\n\n")
		}
	}
}

// splitThinking returns an assistant message's answer and reasoning as
// Qwen3's template finds them: Thinking when set, else the text between
// <think> and </think> in the content, the answer being what follows the
// last </think>.
func splitThinking(m Message) (content, reasoning string) {
	if m.Thinking != "" || !strings.Contains(m.Content, "</think>") {
		return m.Content, m.Thinking
	}
	before, _, _ := strings.Cut(m.Content, "</think>")
	if i := strings.LastIndex(before, "<think>"); i >= 0 {
		before = before[i+len("<think>"):]
	}
	after := m.Content[strings.LastIndex(m.Content, "</think>")+len("</think>"):]
	return strings.TrimLeft(after, "\n"), strings.TrimLeft(strings.TrimRight(before, "\n"), "\n")
}

package tokenizer

import "fmt"

// renderGemma is Gemma 3's template: bos written by the template, a system
// message folded into the first turn ahead of its text (and lost when no
// turn follows), turns alternating user/model starting with the user, each
// message's text trimmed.
func renderGemma(b *chatBuilder, msgs []Message, addGenerationPrompt bool) error {
	b.markup("<bos>")
	var system *Message
	if len(msgs) > 0 && msgs[0].Role == "system" {
		system, msgs = &msgs[0], msgs[1:]
	}
	for i, m := range msgs {
		if (m.Role == "user") != (i%2 == 0) {
			return fmt.Errorf("tokenizer: Gemma conversations alternate user/assistant turns starting with the user; message %d is %q", i, m.Role)
		}
		role := m.Role
		if role == "assistant" {
			role = "model"
		}
		b.markup("<start_of_turn>", role, "\n")
		if i == 0 && system != nil {
			b.text(system.Content)
			b.markup("\n\n")
		}
		b.text(trimPython(m.Content))
		b.markup("<end_of_turn>\n")
	}
	if addGenerationPrompt {
		b.markup("<start_of_turn>model\n")
	}
	return nil
}

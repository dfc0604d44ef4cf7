package tokenizer

import "fmt"

func init() {
	registerChat(&chatFormat{
		Kind: ChatGemma, Precedence: 50, Archs: []string{"gemma3"},
		Render: func(b *chatBuilder, msgs []Message, opt ChatOptions) error {
			return renderGemma(b, msgs, opt.GenerationPrompt)
		},
		Detect: func(has func(string) bool) bool { return has("<start_of_turn>") },
		Vocab: func(s *Spec, v hfVocab) bool {
			if !v.has("<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>") {
				return false
			}
			// Gemma 3: eos = <eos> as in its SentencePiece model (llama.cpp's
			// conversion); a turn ends with <end_of_turn> (generation_config's
			// eos_token_id [1, 106]).
			s.Chat = ChatGemma
			s.EOS, s.EOSIDs = v["<eos>"], []int32{v["<end_of_turn>"]}
			if v.has("<pad>") {
				s.PAD = v["<pad>"]
			}
			return true
		},
	})
}

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

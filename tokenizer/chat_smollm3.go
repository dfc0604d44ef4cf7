package tokenizer

import (
	"fmt"
	"strings"
)

// ChatSmolLM3 is SmolLM3's template: ChatML turns under a system turn of
// metadata (knowledge cutoff, today's date, reasoning mode) and custom
// instructions; <think> reasoning unless thinking is off.
const ChatSmolLM3 = "smollm3"

func init() {
	registerChat(&chatFormat{
		Kind: ChatSmolLM3, Precedence: 75, Archs: []string{"smollm3"}, Reply: ReplyThink,
		Render: renderSmolLM3,
		Detect: func(has func(string) bool) bool { return has("<|im_start|>") && has("Reasoning Mode") },
		Vocab: func(s *Spec, v hfVocab) bool {
			// Llama 3's vocabulary with ChatML and <think> added tokens;
			// no bos (config.json's bos_token_id is null), a turn ends
			// with <|im_end|>, and generation stops at the end-of-turn
			// tokens llama.cpp stops at (Llama 3's among them).
			if !v.has("<|begin_of_text|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>") {
				return false
			}
			s.Chat = ChatSmolLM3
			s.EOS, s.EOSIDs = v["<|im_end|>"], endOfTurnIDs(s.Tokens, s.TokenTypes)
			if v.has("<|finetune_right_pad_id|>") {
				s.PAD = v["<|finetune_right_pad_id|>"]
			}
			return true
		},
	})
}

// The template's custom instructions when the system message gives none.
const (
	smolLM3System      = "You are a helpful AI assistant named SmolLM, trained by Hugging Face.\n\n"
	smolLM3ThinkSystem = "You are a helpful AI assistant named SmolLM, trained by Hugging Face. Your role as an assistant involves thoroughly exploring questions through a systematic thinking process before providing the final precise and accurate solutions. This requires engaging in a comprehensive cycle of analysis, summarizing, exploration, reassessment, reflection, backtracking, and iteration to develop well-considered thinking process. Please structure your response into two main sections: Thought and Solution using the specified format: <think> Thought section </think> Solution section. In the Thought section, detail your reasoning process in steps. Each step should include detailed considerations such as analysing questions, summarizing relevant findings, brainstorming new ideas, verifying the accuracy of the current steps, refining any errors, and revisiting previous steps. In the Solution section, based on various attempts, explorations, and reflections from the Thought section, systematically present the final solution that you deem correct. The Solution section should be logical, accurate, and concise and detail necessary steps needed to reach the conclusion.\n\n"
)

// renderSmolLM3 is SmolLM3's template without tools. The reasoning mode
// is /think unless NoThinking (enable_thinking=false); a first system
// message saying /no_think or /think sets it, and its text without those
// words, right-trimmed, is the custom instructions. A system message
// saying /system_override replaces the whole system turn. Otherwise the
// turn holds the metadata and the instructions and, as the template
// writes <|im_end|> only after a tools section, stays open without tools.
// Then user and tool messages as user turns and assistant messages with
// leading newlines dropped (after an empty <think> block when reasoning is
// off); reasoning is not rendered, and other roles (later system
// messages, developer) are not either.
func renderSmolLM3(b *chatBuilder, msgs []Message, opt ChatOptions) error {
	if len(msgs) == 0 {
		return fmt.Errorf("tokenizer: SmolLM3's template reads the first message; send at least one")
	}
	mode := "/think"
	if opt.NoThinking {
		mode = "/no_think"
	}
	var system, custom string
	if msgs[0].Role == "system" {
		system = msgs[0].Content
		if strings.Contains(system, "/no_think") {
			mode = "/no_think"
		} else if strings.Contains(system, "/think") {
			mode = "/think"
		}
		custom = rstripPython(strings.ReplaceAll(strings.ReplaceAll(system, "/no_think", ""), "/think", ""))
	}
	b.markup("<|im_start|>system\n")
	if strings.Contains(system, "/system_override") {
		b.text(rstripPython(strings.ReplaceAll(custom, "/system_override", "")))
		b.markup("<|im_end|>\n")
	} else {
		b.markup("## Metadata\n\nKnowledge Cutoff Date: June 2025\nToday Date: ", chatNow().Format("02 January 2006"),
			"\nReasoning Mode: ", mode, "\n\n## Custom Instructions\n\n")
		switch {
		case custom != "":
			b.text(custom)
			b.markup("\n\n")
		case mode == "/think":
			b.markup(smolLM3ThinkSystem)
		default:
			b.markup(smolLM3System)
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case "user", "tool":
			b.markup("<|im_start|>user\n")
			b.text(m.Content)
			b.markup("<|im_end|>\n")
		case "assistant":
			b.markup("<|im_start|>assistant\n")
			if mode == "/no_think" {
				b.markup("<think>\n\n</think>\n")
			}
			b.text(strings.TrimLeft(m.Content, "\n"))
			b.markup("<|im_end|>\n")
		}
	}
	if opt.GenerationPrompt {
		b.markup("<|im_start|>assistant\n")
		if mode == "/no_think" {
			b.markup("<think>\n\n</think>\n")
		}
	}
	return nil
}

// rstripPython is Python's str.rstrip(): trimPython's whitespace, from the
// right only.
func rstripPython(s string) string {
	return strings.TrimRightFunc(s, func(r rune) bool { return trimPython(string(r)) == "" })
}

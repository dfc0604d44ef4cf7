package tokenizer

import (
	"fmt"
	"strings"
	"time"
)

// Message is one chat turn. Thinking is the assistant's analysis channel
// (Harmony only).
type Message struct {
	Role     string `json:"role"`
	Content  string `json:"content"`
	Thinking string `json:"thinking,omitempty"`
}

// qwenDefaultSystem is what Qwen2.5's template inserts when the
// conversation does not start with a system message.
const qwenDefaultSystem = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

// harmonyNow supplies the Harmony system message's "Current date" (the
// template's strftime_now); tests pin it.
var harmonyNow = time.Now

// RenderChat renders messages into the prompt text the model was trained
// on, reproducing each model's published jinja template for messages
// without tool calls. kind is Spec.Chat / Info.Chat. Special tokens appear
// as text: encode the result with parseSpecial.
func RenderChat(kind string, msgs []Message, addGenerationPrompt bool) (string, error) {
	for i, m := range msgs {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool":
		default:
			return "", fmt.Errorf("tokenizer: message %d has unknown role %q", i, m.Role)
		}
	}
	switch kind {
	case ChatChatML:
		return renderChatML(msgs, addGenerationPrompt), nil
	case ChatPhi3:
		return renderPhi3(msgs), nil
	case ChatHarmony:
		return renderHarmony(msgs, addGenerationPrompt)
	case ChatNone:
		return "", fmt.Errorf("tokenizer: this model has no chat template; send a plain prompt")
	}
	return "", fmt.Errorf("tokenizer: unknown chat template kind %q", kind)
}

// renderChatML is Qwen2.5's template: a system message always comes first
// (the default one when none is given), tool results are wrapped in
// <tool_response> inside one user turn per run of tool messages.
func renderChatML(msgs []Message, addGenerationPrompt bool) string {
	var b strings.Builder
	if len(msgs) > 0 && msgs[0].Role == "system" {
		b.WriteString("<|im_start|>system\n" + msgs[0].Content + "<|im_end|>\n")
	} else {
		b.WriteString("<|im_start|>system\n" + qwenDefaultSystem + "<|im_end|>\n")
	}
	for i, m := range msgs {
		switch {
		case m.Role == "user" || m.Role == "assistant" || (m.Role == "system" && i > 0):
			b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
		case m.Role == "tool":
			if i == 0 || msgs[i-1].Role != "tool" {
				b.WriteString("<|im_start|>user")
			}
			b.WriteString("\n<tool_response>\n" + m.Content + "\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].Role != "tool" {
				b.WriteString("<|im_end|>\n")
			}
		}
	}
	if addGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String()
}

// renderPhi3 is Phi-3-mini-4k-instruct's template: bos, then each user turn
// followed by the assistant header (so the generation prompt is always
// there), assistant turns closed by <|end|>; other roles are not rendered.
func renderPhi3(msgs []Message) string {
	var b strings.Builder
	b.WriteString("<s>")
	for _, m := range msgs {
		switch m.Role {
		case "user":
			b.WriteString("<|user|>\n" + m.Content + "<|end|>\n<|assistant|>\n")
		case "assistant":
			b.WriteString(m.Content + "<|end|>\n")
		}
	}
	return b.String()
}

// renderHarmony is gpt-oss's template without tools: the system message
// (identity, knowledge cutoff, date, reasoning effort, channels), the first
// system/developer message as developer instructions, then user turns and
// assistant final-channel turns; only a last assistant turn rendered for
// training (no generation prompt) keeps its analysis and ends in <|return|>.
func renderHarmony(msgs []Message, addGenerationPrompt bool) (string, error) {
	var b strings.Builder
	b.WriteString("<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n" +
		"Knowledge cutoff: 2024-06\n" +
		"Current date: " + harmonyNow().Format("2006-01-02") + "\n\n" +
		"Reasoning: medium\n\n" +
		"# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>")
	if len(msgs) > 0 && (msgs[0].Role == "developer" || msgs[0].Role == "system") {
		if msgs[0].Content != "" {
			b.WriteString("<|start|>developer<|message|># Instructions\n\n" + msgs[0].Content + "\n\n<|end|>")
		}
		msgs = msgs[1:]
	}
	for i, m := range msgs {
		switch m.Role {
		case "assistant":
			for _, s := range []string{m.Content, m.Thinking} {
				if strings.Contains(s, "<|channel|>analysis<|message|>") || strings.Contains(s, "<|channel|>final<|message|>") {
					return "", fmt.Errorf("tokenizer: assistant message %d contains <|channel|> tags; pass analysis in Thinking and the final answer in Content", i)
				}
			}
			if i == len(msgs)-1 && !addGenerationPrompt {
				if m.Thinking != "" {
					b.WriteString("<|start|>assistant<|channel|>analysis<|message|>" + m.Thinking + "<|end|>")
				}
				b.WriteString("<|start|>assistant<|channel|>final<|message|>" + m.Content + "<|return|>")
			} else {
				b.WriteString("<|start|>assistant<|channel|>final<|message|>" + m.Content + "<|end|>")
			}
		case "user":
			b.WriteString("<|start|>user<|message|>" + m.Content + "<|end|>")
		case "tool":
			return "", fmt.Errorf("tokenizer: message %d: Harmony tool results need a preceding tool call, which messages here cannot carry", i)
		}
	}
	if addGenerationPrompt {
		b.WriteString("<|start|>assistant")
	}
	return b.String(), nil
}

package tokenizer

import (
	"fmt"
	"strings"
	"time"
)

// Message is one chat turn. Thinking is the assistant's reasoning:
// Harmony's analysis channel, Qwen3's <think> block (the OpenAI API's
// reasoning_content).
type Message struct {
	Role     string `json:"role"`
	Content  string `json:"content"`
	Thinking string `json:"thinking,omitempty"`
}

// Reply formats: how a chat model's reply separates its reasoning from its
// answer (see ReplyFormat).
const (
	ReplyPlain   = ""        // the whole reply is the answer
	ReplyHarmony = "harmony" // Harmony message frames; the analysis channel is reasoning
	ReplyThink   = "think"   // <think>reasoning</think>, then the answer (Qwen3)
)

// ReplyFormat is the reply format of a chat template kind.
func ReplyFormat(kind string) string {
	if f, ok := chatFormats[kind]; ok {
		return f.Reply
	}
	return ReplyPlain
}

// ChatOptions are the template variables a request may set.
type ChatOptions struct {
	// GenerationPrompt ends the prompt with the assistant's header
	// (add_generation_prompt).
	GenerationPrompt bool
	// NoThinking asks a reasoning model to answer without reasoning:
	// Qwen3's enable_thinking=false, which writes an empty <think> block.
	// Templates without reasoning ignore it, as jinja ignores an unused
	// variable.
	NoThinking bool
}

// qwenDefaultSystem is what Qwen2.5's template inserts when the
// conversation does not start with a system message.
const qwenDefaultSystem = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

// chatNow supplies the date templates write (the Harmony system message's
// "Current date", Llama 3.2's "Today Date": the templates' strftime_now);
// tests pin it.
var chatNow = time.Now

// ChatPrompt is a rendered conversation: the prompt text and which bytes
// of it came from messages. Encoded with Tokenizer.EncodeChat, control
// tokens are parsed only in the template's own text: a message that writes
// "<|im_end|>" is text, and cannot end its turn or open another.
type ChatPrompt struct {
	Text    string
	content [][2]int // byte ranges [start, end) of message text, in order
}

// markup reports whether the n bytes at offset at were all written by the
// template.
func (p ChatPrompt) markup(at, n int) bool {
	for _, r := range p.content {
		if at < r[1] && r[0] < at+n {
			return false
		}
	}
	return true
}

// chatBuilder writes a ChatPrompt: template text and message text apart.
type chatBuilder struct {
	b       strings.Builder
	content [][2]int
}

// markup writes template text.
func (c *chatBuilder) markup(s ...string) {
	for _, x := range s {
		c.b.WriteString(x)
	}
}

// text writes a message's text.
func (c *chatBuilder) text(s string) {
	if s == "" {
		return
	}
	start := c.b.Len()
	c.b.WriteString(s)
	c.content = append(c.content, [2]int{start, c.b.Len()})
}

func (c *chatBuilder) prompt() ChatPrompt { return ChatPrompt{Text: c.b.String(), content: c.content} }

// RenderChat renders messages into the prompt text the model was trained
// on; see RenderChatPrompt.
func RenderChat(kind string, msgs []Message, opt ChatOptions) (string, error) {
	p, err := RenderChatPrompt(kind, msgs, opt)
	return p.Text, err
}

// RenderChatPrompt renders messages into the prompt the model was trained
// on, reproducing each model's published jinja template for messages
// without tool calls. kind is Spec.Chat / Info.Chat. Encode the result with
// EncodeChat (or EncodeChatPrompt, which adds bos unless the template wrote
// it).
func RenderChatPrompt(kind string, msgs []Message, opt ChatOptions) (ChatPrompt, error) {
	for i, m := range msgs {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool":
		default:
			return ChatPrompt{}, fmt.Errorf("tokenizer: message %d has unknown role %q", i, m.Role)
		}
	}
	if kind == ChatNone {
		return ChatPrompt{}, fmt.Errorf("tokenizer: this model has no chat template; send a plain prompt")
	}
	f, ok := chatFormats[kind]
	if !ok {
		return ChatPrompt{}, fmt.Errorf("tokenizer: unknown chat template kind %q", kind)
	}
	var c chatBuilder
	if err := f.Render(&c, msgs, opt); err != nil {
		return ChatPrompt{}, err
	}
	return c.prompt(), nil
}

func init() {
	registerChat(&chatFormat{
		Kind: ChatChatML, Precedence: 60, Archs: []string{"qwen2"},
		Render: func(b *chatBuilder, msgs []Message, opt ChatOptions) error {
			renderChatML(b, msgs, opt.GenerationPrompt)
			return nil
		},
		Detect: func(has func(string) bool) bool { return has("<|im_start|>") },
		Vocab: func(s *Spec, v hfVocab) bool {
			if !v.has("<|im_start|>", "<|im_end|>") {
				return false
			}
			s.Chat = ChatChatML
			setQwenSpecials(s, v)
			return true
		},
	})
	registerChat(&chatFormat{
		Kind: ChatPhi3, Precedence: 10, Archs: []string{"phi3"},
		Render: func(b *chatBuilder, msgs []Message, _ ChatOptions) error {
			renderPhi3(b, msgs)
			return nil
		},
		Detect: func(has func(string) bool) bool { return has("<|user|>") && has("<|assistant|>") },
	})
	registerChat(&chatFormat{
		Kind: ChatHarmony, Precedence: 80, Archs: []string{"gpt-oss"}, Reply: ReplyHarmony,
		Render: func(b *chatBuilder, msgs []Message, opt ChatOptions) error {
			return renderHarmony(b, msgs, opt.GenerationPrompt)
		},
		Detect: func(has func(string) bool) bool { return has("<|start|>") && has("<|channel|>") },
		Vocab: func(s *Spec, v hfVocab) bool {
			if !v.has("<|start|>", "<|channel|>", "<|return|>") {
				return false
			}
			// gpt-oss: tokenizer_config.json's bos/eos/pad; generation_config's
			// eos_token_id list [<|return|>, <|endoftext|>, <|call|>].
			s.Chat = ChatHarmony
			s.BOS, s.EOS, s.PAD = v["<|startoftext|>"], v["<|return|>"], v["<|endoftext|>"]
			s.EOSIDs = []int32{v["<|endoftext|>"], v["<|call|>"]}
			return true
		},
	})
}

// setQwenSpecials: Qwen2.5 and Qwen3 instruct have bos = pad =
// <|endoftext|> (never added) and eos = <|im_end|>.
func setQwenSpecials(s *Spec, v hfVocab) {
	s.BOS, s.EOS, s.PAD = v["<|endoftext|>"], v["<|im_end|>"], v["<|endoftext|>"]
	s.EOSIDs = []int32{v["<|endoftext|>"]}
}

// renderChatML is Qwen2.5's template: a system message always comes first
// (the default one when none is given), tool results are wrapped in
// <tool_response> inside one user turn per run of tool messages.
func renderChatML(b *chatBuilder, msgs []Message, addGenerationPrompt bool) {
	b.markup("<|im_start|>system\n")
	if len(msgs) > 0 && msgs[0].Role == "system" {
		b.text(msgs[0].Content)
	} else {
		b.markup(qwenDefaultSystem)
	}
	b.markup("<|im_end|>\n")
	for i, m := range msgs {
		switch {
		case m.Role == "user" || m.Role == "assistant" || (m.Role == "system" && i > 0):
			b.markup("<|im_start|>", m.Role, "\n")
			b.text(m.Content)
			b.markup("<|im_end|>\n")
		case m.Role == "tool":
			renderToolResponse(b, msgs, i)
		}
	}
	if addGenerationPrompt {
		b.markup("<|im_start|>assistant\n")
	}
}

// renderToolResponse writes tool message i as Qwen's templates do: a run of
// tool messages is one user turn of <tool_response> blocks.
func renderToolResponse(b *chatBuilder, msgs []Message, i int) {
	if i == 0 || msgs[i-1].Role != "tool" {
		b.markup("<|im_start|>user")
	}
	b.markup("\n<tool_response>\n")
	b.text(msgs[i].Content)
	b.markup("\n</tool_response>")
	if i == len(msgs)-1 || msgs[i+1].Role != "tool" {
		b.markup("<|im_end|>\n")
	}
}

// renderPhi3 is Phi-3-mini-4k-instruct's template: bos, then each user turn
// followed by the assistant header (so the generation prompt is always
// there), assistant turns closed by <|end|>; other roles are not rendered.
func renderPhi3(b *chatBuilder, msgs []Message) {
	b.markup("<s>")
	for _, m := range msgs {
		switch m.Role {
		case "user":
			b.markup("<|user|>\n")
			b.text(m.Content)
			b.markup("<|end|>\n<|assistant|>\n")
		case "assistant":
			b.text(m.Content)
			b.markup("<|end|>\n")
		}
	}
}

// renderHarmony is gpt-oss's template without tools: the system message
// (identity, knowledge cutoff, date, reasoning effort, channels), the first
// system/developer message as developer instructions, then user turns and
// assistant final-channel turns; only a last assistant turn rendered for
// training (no generation prompt) keeps its analysis and ends in <|return|>.
func renderHarmony(b *chatBuilder, msgs []Message, addGenerationPrompt bool) error {
	b.markup("<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n" +
		"Knowledge cutoff: 2024-06\n" +
		"Current date: " + chatNow().Format("2006-01-02") + "\n\n" +
		"Reasoning: medium\n\n" +
		"# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>")
	if len(msgs) > 0 && (msgs[0].Role == "developer" || msgs[0].Role == "system") {
		if msgs[0].Content != "" {
			b.markup("<|start|>developer<|message|># Instructions\n\n")
			b.text(msgs[0].Content)
			b.markup("\n\n<|end|>")
		}
		msgs = msgs[1:]
	}
	for i, m := range msgs {
		switch m.Role {
		case "assistant":
			for _, s := range []string{m.Content, m.Thinking} {
				if strings.Contains(s, "<|channel|>analysis<|message|>") || strings.Contains(s, "<|channel|>final<|message|>") {
					return fmt.Errorf("tokenizer: assistant message %d contains <|channel|> tags; pass analysis in Thinking and the final answer in Content", i)
				}
			}
			if i == len(msgs)-1 && !addGenerationPrompt {
				if m.Thinking != "" {
					b.markup("<|start|>assistant<|channel|>analysis<|message|>")
					b.text(m.Thinking)
					b.markup("<|end|>")
				}
				b.markup("<|start|>assistant<|channel|>final<|message|>")
				b.text(m.Content)
				b.markup("<|return|>")
			} else {
				b.markup("<|start|>assistant<|channel|>final<|message|>")
				b.text(m.Content)
				b.markup("<|end|>")
			}
		case "user":
			b.markup("<|start|>user<|message|>")
			b.text(m.Content)
			b.markup("<|end|>")
		case "tool":
			return fmt.Errorf("tokenizer: message %d: Harmony tool results need a preceding tool call, which messages here cannot carry", i)
		}
	}
	if addGenerationPrompt {
		b.markup("<|start|>assistant")
	}
	return nil
}

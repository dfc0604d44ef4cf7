package server

import (
	"fmt"
	"strings"

	"github.com/llama-orch/orc/tokenizer"
)

// Qwen3 answers a chat prompt as
//
//	<think>\n…reasoning…\n</think>\n\n…answer…
//
// thinkParser follows the two tags by token id (the same characters inside
// a message are not tags) and returns the reasoning on channelAnalysis,
// which chat completions send as reasoning_content, and the answer as
// content. As the template does when it renders the turn again, the
// newlines around the reasoning and before the answer are dropped. A reply
// that does not open with <think> (thinking turned off: the prompt already
// holds an empty block) is all answer.

// thinkTags are the ids of the <think> and </think> tokens.
type thinkTags struct{ open, close int32 }

// thinkTagsOf looks the tags up by encoding their text; each must be a
// single token.
func thinkTagsOf(tok tokenizer.Tokenizer) (*thinkTags, error) {
	var tags thinkTags
	for _, t := range []struct {
		text string
		id   *int32
	}{{"<think>", &tags.open}, {"</think>", &tags.close}} {
		ids := tok.Encode(t.text, true)
		if len(ids) != 1 {
			return nil, fmt.Errorf("the model's chat format reasons in <think> tags but its vocabulary has no %s token", t.text)
		}
		*t.id = ids[0]
	}
	return &tags, nil
}

type thinkState int

const (
	beforeThink thinkState = iota // nothing generated yet
	inThink                       // after <think>
	inAnswer                      // after </think>, or a reply without reasoning
)

type thinkParser struct {
	tok   tokenizer.Tokenizer
	tags  *thinkTags
	state thinkState
	text  *tokenizer.Stream
	// started: text of the current part (reasoning or answer) has begun,
	// so its newlines are no longer leading ones.
	started bool
	// held are newlines at the end of the reasoning so far: they are sent
	// when more reasoning follows, dropped when </think> does.
	held string
}

func newThinkParser(tok tokenizer.Tokenizer, tags *thinkTags) *thinkParser {
	return &thinkParser{tok: tok, tags: tags, text: tok.NewStream()}
}

func (p *thinkParser) push(id int32) (channel, text string) {
	switch {
	case p.state == beforeThink && id == p.tags.open:
		p.state = inThink
		return "", ""
	case p.state == beforeThink:
		p.state = inAnswer
	case p.state == inThink && id == p.tags.close:
		p.state = inAnswer
		text = p.reasoning(p.text.Flush())
		p.text, p.started, p.held = p.tok.NewStream(), false, ""
		return channelAnalysis, text
	}
	return p.part(p.text.Add(id))
}

func (p *thinkParser) flush() (channel, text string) {
	return p.part(p.text.Flush())
}

// part routes decoded text to the current part.
func (p *thinkParser) part(t string) (channel, text string) {
	if p.state == inThink {
		return channelAnalysis, p.reasoning(t)
	}
	return "", p.leading(t)
}

// leading drops the newlines before a part's first text.
func (p *thinkParser) leading(t string) string {
	if !p.started {
		t = strings.TrimLeft(t, "\n")
		p.started = t != ""
	}
	return t
}

// reasoning returns reasoning text less its leading newlines and the
// newlines it ends with, which wait in held for what follows.
func (p *thinkParser) reasoning(t string) string {
	t = p.leading(t)
	if t == "" {
		return ""
	}
	t = p.held + t
	body := strings.TrimRight(t, "\n")
	p.held = t[len(body):]
	return body
}

package server

import (
	"fmt"
	"strings"

	"github.com/llama-orch/orc/tokenizer"
)

// gpt-oss answers in Harmony's message frames, each message on a channel:
//
//	<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…<|return|>
//
// The chat prompt ends with "<|start|>assistant", so the reply starts inside
// a message header. harmonyParser follows the frames by token id (a message
// may contain the same characters as plain text without framing anything)
// and returns each message's text with its channel. Chat completions return
// the analysis channel as reasoning_content, every other channel (final,
// and commentary, whose preambles are meant for the user) as content.

// channelAnalysis is the channel of the model's reasoning.
const channelAnalysis = "analysis"

// harmonyTokens are the ids of the frame tokens in a model's vocabulary.
type harmonyTokens struct {
	start, channel, message, end, ret, call int32
}

// harmonyTokensOf looks the frame tokens up by encoding their text with
// special-token parsing; each must be a single token.
func harmonyTokensOf(tok tokenizer.Tokenizer) (*harmonyTokens, error) {
	var h harmonyTokens
	for _, t := range []struct {
		text string
		id   *int32
	}{{"<|start|>", &h.start}, {"<|channel|>", &h.channel}, {"<|message|>", &h.message},
		{"<|end|>", &h.end}, {"<|return|>", &h.ret}, {"<|call|>", &h.call}} {
		ids := tok.Encode(t.text, true)
		if len(ids) != 1 {
			return nil, fmt.Errorf("the model's chat format is Harmony but its vocabulary has no %s token", t.text)
		}
		*t.id = ids[0]
	}
	return &h, nil
}

// harmonyState is where in a frame the parser is.
type harmonyState int

const (
	inHeader  harmonyState = iota // after <|start|>: role, <|channel|> name, recipient
	inBody                        // after <|message|>: the message text
	inBetween                     // after <|end|>: waiting for the next <|start|>
	finished                      // after <|return|> or <|call|>
)

// harmonyParser splits a generated Harmony reply into channel text. It is
// driven one id at a time (push) and flushed at the end of generation.
type harmonyParser struct {
	tok   tokenizer.Tokenizer
	ids   *harmonyTokens
	state harmonyState
	// inChannel: header tokens after <|channel|> name the channel.
	inChannel   bool
	channelName []int32 // header ids after <|channel|>
	channel     string  // of the open message
	text        *tokenizer.Stream
}

func newHarmonyParser(tok tokenizer.Tokenizer, ids *harmonyTokens) *harmonyParser {
	return &harmonyParser{tok: tok, ids: ids, state: inHeader}
}

// push consumes one generated id and returns the text it completes and the
// channel of that text; frame tokens return no text.
func (p *harmonyParser) push(id int32) (channel, text string) {
	switch p.state {
	case finished:
		return "", ""
	case inBody:
		switch id {
		case p.ids.end:
			p.state = inBetween
			return p.closeMessage()
		case p.ids.ret, p.ids.call:
			p.state = finished
			return p.closeMessage()
		case p.ids.start, p.ids.channel:
			// A model that skips <|end|> starts the next header right away.
			channel, text = p.closeMessage()
			p.openHeader(id == p.ids.channel)
			return channel, text
		case p.ids.message:
			return "", "" // a stray frame token is not text
		}
		return p.channel, p.text.Add(id)
	case inBetween:
		// Between messages only a new header counts; <|channel|> alone is a
		// header whose <|start|>assistant the model left out.
		if id == p.ids.start || id == p.ids.channel {
			p.openHeader(id == p.ids.channel)
		} else if id == p.ids.ret || id == p.ids.call {
			p.state = finished
		}
		return "", ""
	}
	switch id { // inHeader
	case p.ids.start:
		p.openHeader(false)
	case p.ids.channel:
		p.inChannel = true
		p.channelName = p.channelName[:0]
	case p.ids.message:
		p.state = inBody
		p.channel = headerChannel(p.tok.Decode(p.channelName))
		p.text = p.tok.NewStream()
	case p.ids.end:
		p.state = inBetween // a header without a message
	case p.ids.ret, p.ids.call:
		p.state = finished
	default:
		if p.inChannel {
			p.channelName = append(p.channelName, id)
		}
	}
	return "", ""
}

// flush returns the text held back when generation ends inside a message
// (max_tokens, a stop string): an incomplete UTF-8 tail becomes U+FFFD.
func (p *harmonyParser) flush() (channel, text string) {
	if p.state != inBody {
		return "", ""
	}
	p.state = finished
	return p.closeMessage()
}

func (p *harmonyParser) openHeader(inChannel bool) {
	p.state = inHeader
	p.inChannel = inChannel
	p.channelName = p.channelName[:0]
}

func (p *harmonyParser) closeMessage() (channel, text string) {
	return p.channel, p.text.Flush()
}

// headerChannel is the channel name of a header's text after <|channel|>:
// its first word ("commentary to=functions.f" names channel commentary).
func headerChannel(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

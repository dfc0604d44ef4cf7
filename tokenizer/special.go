package tokenizer

import (
	"sort"
	"strings"
)

// specialMatcher finds added tokens written in text: the leftmost match,
// longest first at one position (as Hugging Face's added-token splitter).
type specialMatcher struct {
	byFirst [256][]specialToken // by first byte, longest first
	// rstrip marks tokens that swallow the whitespace after them (Phi-3's
	// chat tokens, as llama.cpp and the model's tokenizer.json set them).
	rstrip map[int32]bool
}

type specialToken struct {
	text    string
	id      int32
	control bool // matched only when parsing special tokens
}

func newSpecialMatcher(s *Spec) specialMatcher {
	m := specialMatcher{rstrip: map[int32]bool{}}
	for id, text := range s.Tokens {
		typ := s.TokenTypes[id]
		if text == "" || (typ != TypeControl && typ != TypeUserDefined && typ != TypeUnknown) {
			continue
		}
		st := specialToken{text: text, id: int32(id), control: typ != TypeUserDefined}
		m.byFirst[text[0]] = append(m.byFirst[text[0]], st)
		if s.Chat == ChatPhi3 && phi3RStrip(text, typ) {
			m.rstrip[int32(id)] = true
		}
	}
	for i := range m.byFirst {
		sort.SliceStable(m.byFirst[i], func(a, b int) bool { return len(m.byFirst[i][a].text) > len(m.byFirst[i][b].text) })
	}
	return m
}

// phi3RStrip is llama.cpp's Phi-3 rule: every control token and </s> strip
// the whitespace that follows, except <unk>, <s> and <|endoftext|>.
func phi3RStrip(text string, typ int32) bool {
	switch text {
	case "<unk>", "<s>", "<|endoftext|>":
		return false
	case "</s>":
		return true
	}
	return typ == TypeControl
}

// find returns the byte offset and length of the first added token in text
// and its id; n = 0 when there is none (at = len(text)). A control token
// matches only where control(at, n) allows it; user-defined ones always do.
func (m *specialMatcher) find(text string, control func(at, n int) bool) (at, n int, id int32) {
	for i := 0; i < len(text); i++ {
		cands := m.byFirst[text[i]]
		if len(cands) == 0 {
			continue
		}
		for _, c := range cands {
			if strings.HasPrefix(text[i:], c.text) && (!c.control || control(i, len(c.text))) {
				return i, len(c.text), c.id
			}
		}
	}
	return len(text), 0, -1
}

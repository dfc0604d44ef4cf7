package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// Stream decodes a generated sequence token by token. A character may span
// tokens (byte-level BPE splits emoji and CJK into byte tokens), so Add
// holds back a trailing incomplete UTF-8 sequence until the token that
// completes it arrives; everything it returns is valid UTF-8.
type Stream struct {
	t       *tokenizer
	pending []byte
	// stripSpace: drop the leading space of the next token (Decode's
	// whole-text rule for SentencePiece).
	stripSpace bool
}

// Add appends one token and returns the text it completes (possibly "").
// Ids outside the vocabulary decode to U+FFFD.
func (s *Stream) Add(id int32) string {
	var piece []byte
	if id >= 0 && int(id) < len(s.t.pieces) {
		piece = s.t.pieces[id]
	} else {
		piece = []byte(string(utf8.RuneError))
	}
	if s.stripSpace {
		s.stripSpace = false
		if len(piece) > 0 && piece[0] == ' ' {
			piece = piece[1:]
		}
	}
	s.pending = append(s.pending, piece...)
	return s.emit(false)
}

// Flush returns what is held back at the end of the sequence: an incomplete
// UTF-8 sequence becomes U+FFFD.
func (s *Stream) Flush() string { return s.emit(true) }

// emit returns the longest valid prefix of pending, turning invalid bytes
// into U+FFFD and, unless final, keeping an incomplete tail for later.
func (s *Stream) emit(final bool) string {
	p := s.pending
	if utf8.Valid(p) {
		s.pending = s.pending[:0]
		return string(p)
	}
	var b strings.Builder
	i := 0
	for i < len(p) {
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size == 1 {
			if !utf8.FullRune(p[i:]) {
				// The tail is the start of a character: wait for the rest,
				// or at the end replace it with one U+FFFD (as HF does).
				if final {
					b.WriteRune(utf8.RuneError)
					i = len(p)
				}
				break
			}
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		b.Write(p[i : i+size])
		i += size
	}
	s.pending = append(s.pending[:0], p[i:]...)
	return b.String()
}

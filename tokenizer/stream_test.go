package tokenizer

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// streamTokenizers are the tokenizers the stream properties run on: byte-
// level BPE from GGUF and from tokenizer.json, and SentencePiece with byte
// fallback.
var (
	streamOnce sync.Once
	streamToks []Tokenizer
	streamErr  error
)

func loadStreamTokenizers(tb testing.TB) []Tokenizer {
	tb.Helper()
	streamOnce.Do(func() {
		for _, s := range []*Spec{loadGGUFSpec(tb, "ggml-vocab-gpt-2.gguf"), loadGGUFSpec(tb, "ggml-vocab-llama-spm.gguf"), loadHFSpec(tb, "qwen2.5")} {
			tok, err := New(s)
			if err != nil {
				streamErr = err
				return
			}
			streamToks = append(streamToks, tok)
		}
	})
	if streamErr != nil {
		tb.Fatal(streamErr)
	}
	return streamToks
}

// lossless reports whether decode(encode(text)) must give text back: Qwen
// NFC-normalises, and SentencePiece turns a literal ▁ into a space.
func lossless(tok Tokenizer, text string) bool {
	info := tok.Info()
	if info.Model == ModelLlama && strings.Contains(text, spaceMark) {
		return false
	}
	return info.Kind != KindHFJSON || norm.NFC.IsNormalString(text)
}

// checkStream feeds ids one at a time (the finest split; any coarser one
// only concatenates outputs) and checks every piece the stream emits.
func checkStream(t *testing.T, tok Tokenizer, text string, ids []int32) {
	s := tok.NewStream()
	var all strings.Builder
	for i, id := range ids {
		out := s.Add(id)
		if !utf8.ValidString(out) {
			t.Fatalf("%s: after id %d of %v: invalid UTF-8 %q", tok.Info().Model, i, ids, out)
		}
		if strings.ContainsRune(out, utf8.RuneError) && !strings.ContainsRune(text, utf8.RuneError) {
			t.Fatalf("%s: after id %d of %v: U+FFFD for valid input %q", tok.Info().Model, i, ids, text)
		}
		all.WriteString(out)
	}
	rest := s.Flush()
	if strings.ContainsRune(rest, utf8.RuneError) && !strings.ContainsRune(text, utf8.RuneError) {
		t.Fatalf("flush emitted U+FFFD for valid input %q", text)
	}
	all.WriteString(rest)
	// A stream continues a prompt, so SentencePiece's first token keeps the
	// leading space that Decode drops.
	got := all.String()
	if tok.Info().Model == ModelLlama {
		got = strings.TrimPrefix(got, " ")
	}
	if d := tok.Decode(ids); got != d {
		t.Fatalf("stream %q != Decode %q", got, d)
	}
	if lossless(tok, text) && got != text {
		t.Fatalf("%s %s: decode(encode(%q)) = %q", tok.Info().Kind, tok.Info().Model, text, got)
	}
}

// FuzzStream: for any valid UTF-8 text, encoding and streaming the ids back
// never emits invalid UTF-8 or U+FFFD and round-trips where lossless; for
// any id sequence at all, the stream's output stays valid UTF-8.
func FuzzStream(f *testing.F) {
	for _, s := range readCorpus(f) {
		f.Add(s, []byte{0, 1, 2})
	}
	toks := loadStreamTokenizers(f)
	f.Fuzz(func(t *testing.T, text string, raw []byte) {
		if !utf8.ValidString(text) {
			return
		}
		for _, tok := range toks {
			checkStream(t, tok, text, tok.Encode(text, false))
			// Arbitrary ids (pairs of bytes), e.g. a model emitting a lone
			// byte token: the output must still be valid UTF-8.
			var ids []int32
			for i := 0; i+1 < len(raw); i += 2 {
				ids = append(ids, int32(int(raw[i])<<8|int(raw[i+1]))%int32(tok.Info().VocabSize))
			}
			s := tok.NewStream()
			for _, id := range ids {
				if out := s.Add(id); !utf8.ValidString(out) {
					t.Fatalf("ids %v: invalid UTF-8 %q", ids, out)
				}
			}
			if out := s.Flush(); !utf8.ValidString(out) {
				t.Fatalf("ids %v: flush gave invalid UTF-8 %q", ids, out)
			}
		}
	})
}

// TestStreamHoldsPartialCharacters checks a 4-byte emoji split over byte
// tokens comes out whole, and a dangling prefix becomes U+FFFD at the end.
func TestStreamHoldsPartialCharacters(t *testing.T) {
	gpt2 := loadStreamTokenizers(t)[0]
	ids := gpt2.Encode("🦙", false) // byte-level tokens of F0 9F A6 99
	if len(ids) < 2 {
		t.Fatalf("want the emoji split over several tokens, got %v", ids)
	}
	s := gpt2.NewStream()
	for _, id := range ids[:len(ids)-1] {
		if out := s.Add(id); out != "" {
			t.Fatalf("partial emoji emitted %q", out)
		}
	}
	if out := s.Add(ids[len(ids)-1]); out != "🦙" {
		t.Fatalf("completed emoji gave %q", out)
	}
	s = gpt2.NewStream()
	s.Add(ids[0])
	if out := s.Flush(); out != "\uFFFD" {
		t.Fatalf("flush of a dangling prefix gave %q", out)
	}
	if out := gpt2.NewStream().Add(-5); out != "\uFFFD" {
		t.Fatalf("id outside the vocabulary gave %q", out)
	}
}

// TestStreamKeepsContinuationSpace: a generated SentencePiece token such as
// ▁there continues the prompt, so the stream keeps its space; Decode of a
// whole text drops the space Encode added.
func TestStreamKeepsContinuationSpace(t *testing.T) {
	spm := loadStreamTokenizers(t)[1]
	ids := spm.Encode("there", false) // ▁there
	if got := spm.NewStream().Add(ids[0]); got != " there" {
		t.Errorf("stream gave %q, want \" there\"", got)
	}
	if got := spm.Decode(ids); got != "there" {
		t.Errorf("Decode gave %q, want \"there\"", got)
	}
}

package tokenizer

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/gguf"
)

// ggufSpec writes the given tokenizer keys to an in-memory GGUF and reads
// them back with SpecFromGGUF.
func ggufSpec(t *testing.T, kvs map[string]any) (*Spec, error) {
	t.Helper()
	w := gguf.NewWriter()
	for k, v := range kvs {
		w.Set(k, v)
	}
	return SpecFromGGUF(parseWritten(t, w))
}

// parseWritten writes w to memory and parses it back.
func parseWritten(t *testing.T, w *gguf.Writer) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSpecFromGGUFRejectsBadInput(t *testing.T) {
	tokens := []string{"a", "b", "ab"}
	for _, c := range []struct {
		name string
		kvs  map[string]any
		want string
	}{
		{"no model", map[string]any{keyTokens: tokens}, "tokenizer.ggml.model is missing"},
		{"unknown model", map[string]any{keyModel: "bert", keyTokens: tokens}, "unsupported tokenizer.ggml.model"},
		{"no tokens", map[string]any{keyModel: "gpt2"}, "tokens is missing"},
		{"gpt2 without merges", map[string]any{keyModel: "gpt2", keyTokens: tokens}, "merges is missing"},
		{"unknown pre", map[string]any{keyModel: "gpt2", keyTokens: tokens, keyMerges: []string{"a b"}, keyPre: "klingon"}, "unsupported tokenizer.ggml.pre"},
		{"llama without scores", map[string]any{keyModel: "llama", keyTokens: tokens}, "scores is missing"},
		{"scores mismatch", map[string]any{keyModel: "llama", keyTokens: tokens, keyScores: []float32{0}}, "1 scores for 3 tokens"},
		{"types mismatch", map[string]any{keyModel: "gpt2", keyTokens: tokens, keyMerges: []string{"a b"}, keyTokenType: []int32{1}}, "1 token types for 3 tokens"},
		{"eos out of range", map[string]any{keyModel: "gpt2", keyTokens: tokens, keyMerges: []string{"a b"}, keyEOS: uint32(9)}, "outside vocabulary"},
		{"eos ids out of range", map[string]any{keyModel: "gpt2", keyTokens: tokens, keyMerges: []string{"a b"}, keyEOSIDs: []int32{-1}}, "outside vocabulary"},
	} {
		_, err := ggufSpec(t, c.kvs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// A well-formed tiny vocabulary builds and merges.
	s, err := ggufSpec(t, map[string]any{keyModel: "gpt2", keyTokens: tokens, keyMerges: []string{"a b"}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode("abba", false); !slices.Equal(got, []int32{2, 1, 0}) {
		t.Errorf("tiny vocabulary encodes abba as %v, want [2 1 0]", got)
	}
	// A merge naming a token the vocabulary lacks is an error at New.
	s.Merges = []string{"a c"}
	if _, err := New(s); err == nil || !strings.Contains(err.Error(), "outside the vocabulary") {
		t.Errorf("bad merge: %v", err)
	}
}

func TestSpecFromHFJSONRejectsBadInput(t *testing.T) {
	const pre = `"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}`
	for _, c := range []struct{ name, json, want string }{
		{"not json", `{"model":`, "tokenizer.json"},
		{"wordpiece", `{"model":{"type":"WordPiece","vocab":{"a":0}},` + pre + `}`, "model type \"WordPiece\""},
		{"byte fallback", `{"model":{"type":"BPE","byte_fallback":true,"vocab":{"a":0}},` + pre + `}`, "byte_fallback"},
		{"no pre-tokenizer", `{"model":{"type":"BPE","vocab":{"a":0}}}`, "no pre_tokenizer"},
		{"unknown regex", `{"model":{"type":"BPE","vocab":{"a":0}},"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated"},{"type":"ByteLevel","use_regex":false}]}}`, "no hand-written splitter"},
		{"nfkc", `{"normalizer":{"type":"NFKC"},"model":{"type":"BPE","vocab":{"a":0}},` + pre + `}`, "normalizer \"NFKC\""},
		{"negative id", `{"model":{"type":"BPE","vocab":{"a":-4}},` + pre + `}`, "has id -4"},
		{"id used twice", `{"model":{"type":"BPE","vocab":{"a":0,"b":0}},` + pre + `}`, "used twice"},
		{"bad merge", `{"model":{"type":"BPE","vocab":{"a":0},"merges":["a"]},` + pre + `}`, "merge 0"},
		{"three-part merge", `{"model":{"type":"BPE","vocab":{"a":0},"merges":[["a","b","c"]]},` + pre + `}`, "3 parts"},
	} {
		_, err := SpecFromHFJSON([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestGGUFDefaultsFollowLlamaCpp: keys a converter may leave out take
// llama.cpp's defaults: bos is added for Llama 3's pre-tokenizer
// (llama-bpe) and not for Qwen's (qwen2) unless add_bos_token says so, and
// a SentencePiece vocabulary prefixes a space unless add_space_prefix is
// false (Gemma).
func TestGGUFDefaultsFollowLlamaCpp(t *testing.T) {
	bpe := func(pre string, extra map[string]any) *Spec {
		kvs := map[string]any{keyModel: "gpt2", keyTokens: []string{"a", "b", "ab"}, keyMerges: []string{"a b"}, keyPre: pre}
		for k, v := range extra {
			kvs[k] = v
		}
		s, err := ggufSpec(t, kvs)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if !bpe("llama-bpe", nil).AddBOS || bpe("llama-bpe", map[string]any{keyAddBOS: false}).AddBOS {
		t.Error("llama-bpe: bos added by default, not when add_bos_token is false")
	}
	if bpe("qwen2", nil).AddBOS || !bpe("qwen2", map[string]any{keyAddBOS: true}).AddBOS {
		t.Error("qwen2: bos not added by default, added when add_bos_token is true")
	}
	spm := map[string]any{keyModel: "llama", keyTokens: []string{"<unk>", "\u2581a", "a"}, keyScores: []float32{0, -1, -2},
		keyTokenType: []int32{TypeUnknown, TypeNormal, TypeNormal}, keyPre: "default"}
	for prefix, want := range map[bool][]int32{true: {1}, false: {2}} {
		spm[keySpacePrefix] = prefix
		s, err := ggufSpec(t, spm)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Encode("a", false); !slices.Equal(got, want) || !s.AddBOS {
			t.Errorf("add_space_prefix %v: %v (add_bos %v), want %v", prefix, got, s.AddBOS, want)
		}
	}
}

package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llama-orch/orc/gguf"
)

// hfGolden is what scripts/hf_tokenize.py golden writes: the ids and
// decoded text of every string of the corpus files (corpus.json when the
// golden names none) from Hugging Face tokenizers. scripts/js_tokenize.cjs
// writes the same from the JavaScript tokenizers until the HF ones exist.
type hfGolden struct {
	Tokenizer string    `json:"tokenizer"`
	Corpus    []string  `json:"corpus"`
	IDs       [][]int32 `json:"ids"`
	Decoded   []string  `json:"decoded"`
}

// strings returns the corpus the golden was made from.
func (g hfGolden) strings(t *testing.T) []string {
	if len(g.Corpus) == 0 {
		return readCorpus(t)
	}
	return readCorpora(t, g.Corpus...)
}

// goldenFamilies are the tokenizers with committed goldens, with the
// architecture their GGUF carries and the chat kind they select.
var goldenFamilies = []struct{ family, arch, chat string }{
	{"qwen2.5", "qwen2", ChatChatML},
	{"gpt-oss", "gpt-oss", ChatHarmony},
	{"qwen3", "qwen3", ChatQwen3},
	{"gemma3", "gemma3", ChatGemma},
	{"llama3", "llama", ChatLlama3},
	{"smollm3", "smollm3", ChatSmolLM3},
}

func readGolden(t *testing.T, family string) hfGolden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", family+".golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g hfGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s golden: %v", family, err)
	}
	return g
}

// TestHFGoldens compares hf-json encoding and decoding of the corpus with
// Hugging Face tokenizers (encode with add_special_tokens=False, which still
// splits added tokens: parseSpecial=true here).
func TestHFGoldens(t *testing.T) {
	for _, f := range goldenFamilies {
		t.Run(f.family, func(t *testing.T) {
			tok, err := New(loadHFSpec(t, f.family))
			if err != nil {
				t.Fatal(err)
			}
			checkCorpus(t, tok, readGolden(t, f.family))
		})
	}
}

func checkCorpus(t *testing.T, tok Tokenizer, g hfGolden) {
	t.Helper()
	corpus := g.strings(t)
	if len(corpus) < 200 {
		t.Fatalf("corpus has %d strings, want at least 200", len(corpus))
	}
	if len(g.IDs) != len(corpus) || len(g.Decoded) != len(corpus) {
		t.Fatalf("golden has %d/%d entries for %d corpus strings; regenerate with scripts/hf_tokenize.py", len(g.IDs), len(g.Decoded), len(corpus))
	}
	bad := 0
	for i, s := range corpus {
		got := tok.Encode(s, true)
		if !slices.Equal(got, g.IDs[i]) {
			bad++
			t.Errorf("string %d %q:\n got %v\nwant %v", i, s, got, g.IDs[i])
		}
		if d := tok.Decode(g.IDs[i]); d != g.Decoded[i] {
			t.Errorf("string %d: decode = %q, HF %q", i, d, g.Decoded[i])
		}
		if bad > 10 {
			t.Fatal("too many mismatches")
		}
	}
}

// TestGGUFMatchesHFJSON loads every golden vocabulary through a GGUF
// written by WriteGGUF (gguf-bpe), as the synth models carry them, and
// checks they encode the corpus exactly like tokenizer.json (hf-json) and
// the goldens.
func TestGGUFMatchesHFJSON(t *testing.T) {
	for _, c := range goldenFamilies {
		t.Run(c.family, func(t *testing.T) {
			hf := loadHFSpec(t, c.family)
			w := gguf.NewWriter()
			w.Set("general.architecture", c.arch)
			w.Set(c.arch+".context_length", uint32(32768))
			hf.WriteGGUF(w)
			path := filepath.Join(t.TempDir(), "vocab.gguf")
			if err := w.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			s, err := SpecFromFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if s.Kind != KindGGUF || s.ContextLength != 32768 || s.Chat != c.chat || !slices.Equal(s.StopIDs(), hf.StopIDs()) ||
				s.BOS != hf.BOS || s.AddBOS != hf.AddBOS || s.ChatTemplate != hf.ChatTemplate {
				t.Errorf("GGUF spec: kind %q ctx %d chat %q stops %v bos %d add %v (hf-json chat %q stops %v bos %d add %v)",
					s.Kind, s.ContextLength, s.Chat, s.StopIDs(), s.BOS, s.AddBOS, hf.Chat, hf.StopIDs(), hf.BOS, hf.AddBOS)
			}
			tok, err := New(s)
			if err != nil {
				t.Fatal(err)
			}
			checkCorpus(t, tok, readGolden(t, c.family))
		})
	}
}

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
// decoded text of every corpus string from Hugging Face tokenizers.
type hfGolden struct {
	Tokenizer string    `json:"tokenizer"`
	IDs       [][]int32 `json:"ids"`
	Decoded   []string  `json:"decoded"`
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
	corpus := readCorpus(t)
	if len(corpus) < 200 {
		t.Fatalf("corpus has %d strings, want at least 200", len(corpus))
	}
	for _, family := range []string{"qwen2.5", "gpt-oss"} {
		t.Run(family, func(t *testing.T) {
			g := readGolden(t, family)
			if len(g.IDs) != len(corpus) || len(g.Decoded) != len(corpus) {
				t.Fatalf("golden has %d/%d entries for %d corpus strings; regenerate with scripts/hf_tokenize.py", len(g.IDs), len(g.Decoded), len(corpus))
			}
			tok, err := New(loadHFSpec(t, family))
			if err != nil {
				t.Fatal(err)
			}
			checkCorpus(t, tok, corpus, g)
		})
	}
}

func checkCorpus(t *testing.T, tok Tokenizer, corpus []string, g hfGolden) {
	t.Helper()
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

// TestGGUFMatchesHFJSON loads the Qwen2.5 and gpt-oss vocabularies through
// a GGUF written by WriteGGUF (gguf-bpe) and checks they encode the corpus
// exactly like tokenizer.json (hf-json) and the HF goldens.
func TestGGUFMatchesHFJSON(t *testing.T) {
	for _, c := range []struct{ family, arch, chat string }{{"qwen2.5", "qwen2", ChatChatML}, {"gpt-oss", "gpt-oss", ChatHarmony}} {
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
			if s.Kind != KindGGUF || s.ContextLength != 32768 || s.Chat != c.chat || !slices.Equal(s.StopIDs(), hf.StopIDs()) {
				t.Errorf("GGUF spec: kind %q ctx %d chat %q stops %v (hf-json %v)", s.Kind, s.ContextLength, s.Chat, s.StopIDs(), hf.StopIDs())
			}
			tok, err := New(s)
			if err != nil {
				t.Fatal(err)
			}
			checkCorpus(t, tok, readCorpus(t), readGolden(t, c.family))
		})
	}
}

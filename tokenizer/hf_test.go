package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
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
		if !equalIDs(got, g.IDs[i]) {
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

// TestQwenGGUFMatchesHFJSON loads the Qwen2.5 vocabulary through a GGUF
// written by WriteGGUF (gguf-bpe) and checks it encodes the corpus exactly
// like tokenizer.json (hf-json) and the HF goldens.
func TestQwenGGUFMatchesHFJSON(t *testing.T) {
	w := gguf.NewWriter()
	w.Set("general.architecture", "qwen2")
	w.Set("qwen2.context_length", uint32(32768))
	loadHFSpec(t, "qwen2.5").WriteGGUF(w)
	path := filepath.Join(t.TempDir(), "qwen-vocab.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := SpecFromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != KindGGUF || s.ContextLength != 32768 || s.Chat != ChatChatML {
		t.Errorf("GGUF spec: kind %q ctx %d chat %q", s.Kind, s.ContextLength, s.Chat)
	}
	tok, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	checkCorpus(t, tok, readCorpus(t), readGolden(t, "qwen2.5"))
}

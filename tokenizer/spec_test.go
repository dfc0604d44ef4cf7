package tokenizer

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/llama-orch/orc/gguf"
)

// shared is the team's read-only test data.
var shared = filepath.Join("..", "..", "shared", "testdata")

func loadGGUFSpec(t testing.TB, name string) *Spec {
	t.Helper()
	f, err := gguf.Open(filepath.Join(shared, "vocab", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := SpecFromGGUF(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// hfSpecs caches parsed tokenizer.json specs: gpt-oss's is 28 MB and
// several tests read it. Tests that modify a spec copy it first.
var (
	hfSpecsMu sync.Mutex
	hfSpecs   = map[string]*Spec{}
)

// synthAssets holds the tokenizers compiler/synth embeds (zstd-compressed
// tokenizer.json and tokenizer_config.json of Qwen3, Gemma 3, Llama 3.1).
var synthAssets = filepath.Join("..", "compiler", "synth", "assets")

// loadHFSpec reads a family's tokenizer.json from the shared test data, or
// else with its tokenizer_config.json from the synth assets.
func loadHFSpec(t testing.TB, family string) *Spec {
	t.Helper()
	hfSpecsMu.Lock()
	defer hfSpecsMu.Unlock()
	if s, ok := hfSpecs[family]; ok {
		return s
	}
	data, err := os.ReadFile(filepath.Join(shared, "tokenizers", family, "tokenizer.json"))
	var config []byte
	if errors.Is(err, fs.ErrNotExist) {
		data = readAsset(t, family+"-tokenizer.json")
		config = readAsset(t, family+"-tokenizer_config.json")
	} else if err != nil {
		t.Fatal(err)
	}
	s, err := SpecFromHFJSON(data)
	if err != nil {
		t.Fatalf("%s: %v", family, err)
	}
	if config != nil {
		if err := s.ApplyHFConfig(config); err != nil {
			t.Fatalf("%s: %v", family, err)
		}
	}
	hfSpecs[family] = s
	return s
}

// readAsset decompresses one of compiler/synth's embedded assets.
func readAsset(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(synthAssets, name+".zst"))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	data, err := dec.DecodeAll(raw, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return data
}

func TestSpecFromGGUF(t *testing.T) {
	phi := loadGGUFSpec(t, "ggml-vocab-phi-3.gguf")
	if phi.Model != ModelLlama || phi.BOS != 1 || phi.EOS != 32000 || !phi.AddBOS || phi.Chat != ChatPhi3 || phi.ContextLength != 4096 {
		t.Errorf("phi-3 spec: model %q bos %d eos %d add_bos %v chat %q ctx %d", phi.Model, phi.BOS, phi.EOS, phi.AddBOS, phi.Chat, phi.ContextLength)
	}
	if got := phi.StopIDs(); !reflect.DeepEqual(got, []int32{32000, 32007}) {
		t.Errorf("phi-3 stop ids %v, want [32000 32007] (<|endoftext|>, <|end|>)", got)
	}
	g := loadGGUFSpec(t, "ggml-vocab-gpt-2.gguf")
	if g.Model != ModelGPT2 || g.Pre != "gpt-2" || len(g.Merges) != 50000 || g.EOS != 50256 || g.AddBOS || g.Chat != ChatNone {
		t.Errorf("gpt-2 spec: model %q pre %q merges %d eos %d add_bos %v chat %q", g.Model, g.Pre, len(g.Merges), g.EOS, g.AddBOS, g.Chat)
	}
}

func TestSpecFromHFJSON(t *testing.T) {
	q := loadHFSpec(t, "qwen2.5")
	if len(q.Tokens) != 151665 || len(q.Merges) != 151387 || q.Pre != "qwen2" || q.Normalizer != "nfc" || q.EOS != 151645 || q.PAD != 151643 || q.Chat != ChatChatML {
		t.Errorf("qwen2.5: tokens %d merges %d pre %q norm %q eos %d pad %d chat %q", len(q.Tokens), len(q.Merges), q.Pre, q.Normalizer, q.EOS, q.PAD, q.Chat)
	}
	// <tool_call> is a non-special added token: user-defined, as llama.cpp converts it.
	if q.Tokens[151657] != "<tool_call>" || q.TokenTypes[151657] != TypeUserDefined || q.TokenTypes[151659] != TypeControl {
		t.Errorf("qwen2.5 added token types: %q %d, %q %d", q.Tokens[151657], q.TokenTypes[151657], q.Tokens[151659], q.TokenTypes[151659])
	}
	o := loadHFSpec(t, "gpt-oss")
	if len(o.Tokens) != 200019 || o.Pre != "gpt-4o" || !o.IgnoreMerges || o.EOS != 200002 || o.Chat != ChatHarmony {
		t.Errorf("gpt-oss: tokens %d pre %q ignore_merges %v eos %d chat %q", len(o.Tokens), o.Pre, o.IgnoreMerges, o.EOS, o.Chat)
	}
	if got := o.StopIDs(); !reflect.DeepEqual(got, []int32{200002, 199999, 200012}) {
		t.Errorf("gpt-oss stop ids %v", got)
	}
}

// TestSpecRoundTrips checks msgpack and GGUF round trips keep every field.
func TestSpecRoundTrips(t *testing.T) {
	for _, s := range []*Spec{loadHFSpec(t, "qwen2.5"), loadGGUFSpec(t, "ggml-vocab-phi-3.gguf")} {
		b, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalSpec(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s, back) {
			t.Errorf("%s/%s: msgpack round trip changed the spec", s.Kind, s.Model)
		}

		w := gguf.NewWriter()
		w.Set("general.architecture", "qwen2")
		s.WriteGGUF(w)
		path := filepath.Join(t.TempDir(), "tok.gguf")
		if err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := SpecFromGGUF(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for name, eq := range map[string]bool{
			"tokens": reflect.DeepEqual(g.Tokens, s.Tokens), "types": reflect.DeepEqual(g.TokenTypes, s.TokenTypes),
			"merges": reflect.DeepEqual(g.Merges, s.Merges), "scores": reflect.DeepEqual(g.Scores, s.Scores),
			"pre": g.Pre == s.Pre || s.Model == ModelLlama, "normalizer": g.Normalizer == s.Normalizer,
			"specials": g.BOS == s.BOS && g.EOS == s.EOS && g.PAD == s.PAD && g.UNK == s.UNK && g.AddBOS == s.AddBOS,
			"stops":    reflect.DeepEqual(g.StopIDs(), s.StopIDs()), "chat": g.Chat == s.Chat,
		} {
			if !eq {
				t.Errorf("%s/%s: GGUF round trip changed %s", s.Kind, s.Model, name)
			}
		}
	}
}

func TestUnmarshalSpecRejectsBadInput(t *testing.T) {
	if _, err := UnmarshalSpec([]byte{0xc1, 0x00}); err == nil {
		t.Error("garbage accepted")
	}
	s := &Spec{Kind: KindGGUF, Model: ModelGPT2, Pre: "qwen2", Tokens: []string{"a"}, TokenTypes: []int32{1}, EOS: 7}
	b, _ := s.Marshal()
	if _, err := UnmarshalSpec(b); err == nil {
		t.Error("eos outside the vocabulary accepted")
	}
}

// TestRealModelVocabularies loads the tokenizers of the real small models
// (stories260K is GGUF v1) and round-trips a sentence.
func TestRealModelVocabularies(t *testing.T) {
	for _, c := range []struct {
		file  string
		vocab int
	}{{"stories260k-f32.gguf", 512}, {"llama-2-tiny-random.gguf", 32000}} {
		s, err := SpecFromFile(filepath.Join(shared, "models", c.file))
		if err != nil {
			t.Fatal(err)
		}
		tok, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		info := tok.Info()
		if info.VocabSize != c.vocab || info.BOS != 1 || info.EOS != 2 || !info.AddBOS {
			t.Errorf("%s: info %+v", c.file, info)
		}
		const text = "Once upon a time, there was a little girl named Lily."
		ids := tok.Encode(text, false)
		if back := tok.Decode(ids); back != text {
			t.Errorf("%s: decode(encode) = %q (ids %v)", c.file, back, ids)
		}
	}
}

// TestQwenArraysMatchRealGGUF checks the Qwen2.5 tokens and merges read from
// tokenizer.json against the sha256 hashes of the real Qwen2.5-0.5B-Instruct
// GGUF's arrays (shared reference, hashed as ollama's converter test does:
// sha256 of the JSON array). That conversion pads the vocabulary to 151936
// with "[PAD0]".. and types differ by converter, so only tokens and merges
// are compared.
func TestQwenArraysMatchRealGGUF(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(shared, "reference", "qwen2.5-0.5b-instruct-f16.tensors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]string
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	s := loadHFSpec(t, "qwen2.5")
	tokens := slices.Clone(s.Tokens)
	for i := 0; len(tokens) < 151936; i++ {
		tokens = append(tokens, fmt.Sprintf("[PAD%d]", i))
	}
	for key, v := range map[string]any{keyTokens: tokens, keyMerges: s.Merges} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != ref[key] {
			t.Errorf("%s: sha256 %s, real GGUF %s", key, got, ref[key])
		}
	}
}

// TestStopTokensOfNewFamilies: generation ends at each family's end-of-turn
// tokens, through tokenizer.json and through a GGUF. The embedded Llama
// vocabulary names id 128008 as Llama 3.0 did; in a GGUF with Llama 3.1's
// name for it, <|eom_id|>, it is a stop too (the renamed tokenizer.json
// spec is not checked: its stops were found before the rename).
func TestStopTokensOfNewFamilies(t *testing.T) {
	llama31 := *loadHFSpec(t, "llama3")
	llama31.Tokens = slices.Clone(llama31.Tokens)
	llama31.Tokens[128008] = "<|eom_id|>"
	for _, c := range []struct {
		name string
		spec *Spec
		want []string
	}{
		{"qwen3", loadHFSpec(t, "qwen3"), []string{"<|im_end|>", "<|endoftext|>"}},
		{"gemma3", loadHFSpec(t, "gemma3"), []string{"<eos>", "<end_of_turn>"}},
		{"llama3", loadHFSpec(t, "llama3"), []string{"<|eot_id|>", "<|end_of_text|>"}},
		{"llama3.1 names", &llama31, []string{"<|eot_id|>", "<|end_of_text|>", "<|eom_id|>"}},
	} {
		specs := []*Spec{c.spec}
		if c.spec == &llama31 {
			specs = nil
		}
		w := gguf.NewWriter()
		c.spec.WriteGGUF(w)
		fromGGUF, err := SpecFromGGUF(parseWritten(t, w))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range append(specs, fromGGUF) {
			var got []string
			for _, id := range s.StopIDs() {
				got = append(got, s.Tokens[id])
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.want))
			if !slices.Equal(got, want) {
				t.Errorf("%s (%s): stop tokens %q, want %q", c.name, s.Kind, got, want)
			}
		}
	}
}

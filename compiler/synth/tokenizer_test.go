package synth

import (
	"bytes"
	"slices"
	"testing"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/tokenizer"
)

// The embedded Qwen3, Gemma 3 and Llama 3.1 tokenizers reach a GGUF as the
// real conversions write them: padded (or, Gemma 3 1B, trimmed of the
// out-of-range <image_soft_token>) to the model's vocabulary, with the chat
// template of tokenizer_config.json, and read back with the chat kind, bos
// and stop tokens the server uses.
func TestHFTokenizersReachGGUF(t *testing.T) {
	for _, c := range []struct {
		ref    string
		nVocab int
		chat   string
		bos    int32
		addBOS bool
		stops  []string
		text   string
		ids    []int32
	}{
		{"hf:qwen3", 151936, tokenizer.ChatQwen3, 151643, false, []string{"<|im_end|>", "<|endoftext|>"},
			"<think>\nhi\n</think>", []int32{151667, 198, 6023, 198, 151668}},
		{"hf:gemma3", 262144, tokenizer.ChatGemma, 2, true, []string{"<eos>", "<end_of_turn>"},
			"Hello world", []int32{9259, 1902}},
		{"hf:gemma3", 262208, tokenizer.ChatGemma, 2, true, []string{"<eos>", "<end_of_turn>"},
			"<image_soft_token>", []int32{262144}},
		{"hf:llama3", 128256, tokenizer.ChatLlama3, 128000, true, []string{"<|eot_id|>", "<|end_of_text|>"},
			"Hello world", []int32{9906, 1917}},
		{"hf:smollm3", 128256, tokenizer.ChatSmolLM3, -1, false, []string{"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"},
			"<think>\nhi\n</think>", []int32{128002, 198, 6151, 198, 128003}},
	} {
		w := gguf.NewWriter()
		w.Set("general.architecture", "llama")
		p := &Preset{Name: c.ref, Tokenizer: c.ref, H: arch.Hparams{NVocab: c.nVocab}}
		if err := writeTokenizer(w, p); err != nil {
			t.Fatalf("%s: %v", c.ref, err)
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		s, err := tokenizer.SpecFromGGUF(f)
		if err != nil {
			t.Fatalf("%s: %v", c.ref, err)
		}
		tmpl, _ := f.String("tokenizer.chat_template")
		if len(s.Tokens) != c.nVocab || s.Chat != c.chat || s.BOS != c.bos || s.AddBOS != c.addBOS || tmpl == "" {
			t.Errorf("%s/%d: %d tokens, chat %q, bos %d add %v, template %d bytes", c.ref, c.nVocab, len(s.Tokens), s.Chat, s.BOS, s.AddBOS, len(tmpl))
		}
		var stops []string
		for _, id := range s.StopIDs() {
			stops = append(stops, s.Tokens[id])
		}
		if !sameSet(stops, c.stops) {
			t.Errorf("%s: stop tokens %q, want %q", c.ref, stops, c.stops)
		}
		tok, err := tokenizer.New(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Encode(c.text, true); !slices.Equal(got, c.ids) {
			t.Errorf("%s/%d: %q encodes to %v, want %v", c.ref, c.nVocab, c.text, got, c.ids)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

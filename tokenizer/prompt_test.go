package tokenizer

import (
	"slices"
	"testing"
)

func TestEncodePrompt(t *testing.T) {
	phi, err := New(loadGGUFSpec(t, "ggml-vocab-phi-3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if got := EncodePrompt(phi, "Hi"); !slices.Equal(got, []int32{1, 6324}) {
		t.Errorf("Phi-3 plain prompt %v, want bos then ▁Hi", got)
	}
	chat, _ := RenderChat(ChatPhi3, []Message{{Role: "user", Content: "Hi"}}, ChatOptions{GenerationPrompt: true})
	if got := EncodePrompt(phi, chat); !slices.Equal(got, []int32{1, 32010, 6324, 32007, 32001}) {
		t.Errorf("Phi-3 chat prompt %v: want one bos", got)
	}
	gpt2, err := New(loadGGUFSpec(t, "ggml-vocab-gpt-2.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if got := EncodePrompt(gpt2, "Hello world"); !slices.Equal(got, []int32{15496, 995}) {
		t.Errorf("GPT-2 prompt %v: no bos expected", got)
	}
}

// TestNewFamiliesPromptBOS: Gemma 3 and Llama 3 expect bos before a prompt
// and their chat templates write it, so a chat prompt has it once; Qwen3
// has none. Expected ids from the JavaScript tokenizers (add_special_tokens
// true for the plain prompt, false for the rendered chat).
func TestNewFamiliesPromptBOS(t *testing.T) {
	user := []Message{{Role: "user", Content: "Hi"}}
	for _, c := range []struct {
		family, kind string
		opt          ChatOptions
		plain, chat  []int32
	}{
		{"gemma3", ChatGemma, ChatOptions{GenerationPrompt: true}, []int32{2, 10979}, []int32{2, 105, 2364, 107, 10979, 106, 107, 105, 4368, 107}},
		{"llama3", ChatLlama3, ChatOptions{GenerationPrompt: true}, []int32{128000, 13347},
			[]int32{128000, 128006, 882, 128007, 271, 13347, 128009, 128006, 78191, 128007, 271}},
		{"qwen3", ChatQwen3, ChatOptions{GenerationPrompt: true, NoThinking: true}, []int32{13048},
			[]int32{151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198, 151667, 271, 151668, 271}},
	} {
		tok, err := New(loadHFSpec(t, c.family))
		if err != nil {
			t.Fatal(err)
		}
		if tok.Info().Chat != c.kind {
			t.Errorf("%s: chat kind %q, want %q", c.family, tok.Info().Chat, c.kind)
		}
		if got := EncodePrompt(tok, "Hi"); !slices.Equal(got, c.plain) {
			t.Errorf("%s plain prompt %v, want %v", c.family, got, c.plain)
		}
		p, err := RenderChatPrompt(tok.Info().Chat, user, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := EncodeChatPrompt(tok, p); !slices.Equal(got, c.chat) {
			t.Errorf("%s chat prompt %v, want %v", c.family, got, c.chat)
		}
	}
}

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

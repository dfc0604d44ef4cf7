package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/llama-orch/orc/tokenizer"
)

var (
	assetToksMu sync.Mutex
	assetToks   = map[string]tokenizer.Tokenizer{}
)

// qwen3Tokenizer is the real Qwen3 tokenizer (ChatML with <think>).
func qwen3Tokenizer(t *testing.T) tokenizer.Tokenizer { return assetTokenizer(t, "qwen3") }

// assetTokenizer is a real tokenizer read from the tokenizer.json and
// tokenizer_config.json that compiler/synth embeds.
func assetTokenizer(t *testing.T, name string) tokenizer.Tokenizer {
	t.Helper()
	assetToksMu.Lock()
	defer assetToksMu.Unlock()
	if tok, ok := assetToks[name]; ok {
		return tok
	}
	read := func(file string) []byte {
		raw, err := os.ReadFile(filepath.Join("..", "compiler", "synth", "assets", name+"-"+file+".zst"))
		if err != nil {
			t.Fatal(err)
		}
		dec, _ := zstd.NewReader(nil)
		defer dec.Close()
		data, err := dec.DecodeAll(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	s, err := tokenizer.SpecFromHFJSON(read("tokenizer.json"))
	if err == nil {
		err = s.ApplyHFConfig(read("tokenizer_config.json"))
	}
	var tok tokenizer.Tokenizer
	if err == nil {
		tok, err = tokenizer.New(s)
	}
	if err != nil {
		t.Fatal(err)
	}
	assetToks[name] = tok
	return tok
}

func TestThinkParser(t *testing.T) {
	tok := qwen3Tokenizer(t)
	if tok.Info().Chat != tokenizer.ChatQwen3 {
		t.Fatalf("Qwen3 chat kind %q", tok.Info().Chat)
	}
	tags, err := thinkTagsOf(tok)
	if err != nil {
		t.Fatal(err)
	}
	plain := func(s string) []int32 { return tok.Encode(s, false) }
	if n := len(plain("🫠")); n < 2 {
		t.Fatalf("🫠 is %d token(s); the split-character case needs a character of several tokens", n)
	}
	for _, c := range []struct {
		name string
		ids  []int32
		want []channelText
	}{
		{"reasoning then answer", replyIDs(tok, "<think>\nThe user adds.\n</think>\n\n4 🦙"),
			[]channelText{{channelAnalysis, "The user adds."}, {"", "4 🦙"}}},
		{"thinking off: all answer", replyIDs(tok, "Hello\n\nthere"), []channelText{{"", "Hello\n\nthere"}}},
		{"empty reasoning", replyIDs(tok, "<think>\n\n</think>\n\nHi"), []channelText{{"", "Hi"}}},
		{"newlines inside the reasoning stay", replyIDs(tok, "<think>\na‖\n‖\nb\n‖\n</think>c"),
			[]channelText{{channelAnalysis, "a\n\nb"}, {"", "c"}}},
		// The tag characters inside the answer, or a second </think>, are text.
		{"tags after the answer starts are text", slices.Concat(replyIDs(tok, "<think>x</think>y"), plain("<think>"), replyIDs(tok, "</think>z")),
			[]channelText{{channelAnalysis, "x"}, {"", "y<think></think>z"}}},
		{"max tokens inside the reasoning", replyIDs(tok, "<think>\npartial\n"), []channelText{{channelAnalysis, "partial"}}},
		{"flush inside a character", slices.Concat(replyIDs(tok, "<think>r</think>x"), plain("🫠")[:1]), // 🫠 is three tokens
			[]channelText{{channelAnalysis, "r"}, {"", "x\uFFFD"}}},
	} {
		if got := parseReply(t, newThinkParser(tok, tags), c.ids); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestThinkTagsMissing(t *testing.T) {
	_, tok := openCPU(t, testPlans["qwen"]) // Qwen2.5: no <think>
	if _, err := thinkTagsOf(tok); err == nil || !strings.Contains(err.Error(), "<think>") {
		t.Errorf("thinkTagsOf on Qwen2.5's vocabulary: %v, want an error naming <think>", err)
	}
}

// thinkServer serves the tiny Qwen2.5 plan (its vocabulary of 151936 holds
// every Qwen3 id) with the Qwen3 tokenizer, greedy replies following the
// script.
func thinkServer(t *testing.T, reply string) string {
	t.Helper()
	return thinkServerOf(t, qwen3Tokenizer(t), reply)
}

// thinkServerOf serves reply, in tok's ids, to every request.
func thinkServerOf(t *testing.T, tok tokenizer.Tokenizer, reply string) string {
	t.Helper()
	dev, _ := openCPU(t, testPlans["qwen"])
	return httptestServer(t, serveDevice(t, &scriptedDevice{Device: dev, script: replyIDs(tok, reply)}, tok, Config{})).URL
}

// TestThinkChatCompletion: Qwen3's reasoning is reasoning_content, the
// answer content; enable_thinking=false writes the empty <think> block into
// the prompt; a reasoning_content sent back is rendered where the template
// keeps it; other template variables are refused.
func TestThinkChatCompletion(t *testing.T) {
	base := thinkServer(t, "<think>\nThe user greets.\n</think>\n\nHello 🦙!<|im_end|>")
	msg, finish, usage := chatMessage(t, base, `{"messages":[{"role":"user","content":"Hi!"}],"max_tokens":32,"temperature":0}`)
	if msg["content"] != "Hello 🦙!" || msg["reasoning_content"] != "The user greets." || finish != "stop" {
		t.Errorf("message %q finish %q", msg, finish)
	}
	promptTokens := func(body string) float64 {
		_, _, u := chatMessage(t, base, body)
		return u["prompt_tokens"].(float64)
	}
	empty := float64(len(qwen3Tokenizer(t).Encode("<think>\n\n</think>\n\n", true)))
	off := promptTokens(`{"messages":[{"role":"user","content":"Hi!"}],"max_tokens":1,"chat_template_kwargs":{"enable_thinking":false}}`)
	on := promptTokens(`{"messages":[{"role":"user","content":"Hi!"}],"max_tokens":1,"chat_template_kwargs":{"enable_thinking":true}}`)
	if on != usage["prompt_tokens"].(float64) || off != on+empty {
		t.Errorf("prompt tokens: default %v, thinking on %v, off %v (want on + %v)", usage["prompt_tokens"], on, off, empty)
	}
	withReasoning := promptTokens(`{"messages":[{"role":"user","content":"Hi!"},{"role":"assistant","content":"Hello","reasoning_content":"one two three"}],"max_tokens":1}`)
	without := promptTokens(`{"messages":[{"role":"user","content":"Hi!"},{"role":"assistant","content":"Hello"}],"max_tokens":1}`)
	if withReasoning <= without {
		t.Errorf("reasoning_content of the last assistant turn not rendered: %v prompt tokens with it, %v without", withReasoning, without)
	}
	for body, param := range map[string]string{
		`{"messages":[{"role":"user","content":"Hi"}],"chat_template_kwargs":{"tools_in_user_message":true}}`: "chat_template_kwargs.tools_in_user_message",
		`{"messages":[{"role":"user","content":"Hi"}],"chat_template_kwargs":{"enable_thinking":"no"}}`:       "chat_template_kwargs.enable_thinking",
	} {
		r, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error openAIError }
		json.NewDecoder(r.Body).Decode(&e)
		r.Body.Close()
		if r.StatusCode != http.StatusBadRequest || e.Error.Param == nil || *e.Error.Param != param {
			t.Errorf("%s: status %d error %+v, want 400 naming %s", body, r.StatusCode, e.Error, param)
		}
	}
}

// TestThinkChatStream: streamed reasoning deltas come first, then content.
func TestThinkChatStream(t *testing.T) {
	base := thinkServer(t, "<think>\nStep one.\n\nStep two.\n</think>\n\nDone.<|im_end|>")
	reasoning, content, order := streamChat(t, base, `{"messages":[{"role":"user","content":"Go"}],"max_tokens":32,"temperature":0,"stream":true}`)
	if reasoning != "Step one.\n\nStep two." || content != "Done." {
		t.Errorf("stream: reasoning %q content %q", reasoning, content)
	}
	if i := slices.Index(order, "content"); i < 1 || slices.Contains(order[i:], "reasoning") {
		t.Errorf("chunk order %v: want reasoning chunks, then content chunks", order)
	}
}

// TestThinkSmolLM3: SmolLM3's reasoning is reasoning_content too; with
// enable_thinking=false its prompt says /no_think and holds the empty
// <think> block.
func TestThinkSmolLM3(t *testing.T) {
	tok := assetTokenizer(t, "smollm3")
	if tok.Info().Chat != tokenizer.ChatSmolLM3 {
		t.Fatalf("chat kind %q", tok.Info().Chat)
	}
	base := thinkServerOf(t, tok, "<think>\nTwo and two.\n</think>\nFour.<|im_end|>")
	msg, finish, usage := chatMessage(t, base, `{"messages":[{"role":"user","content":"2+2?"}],"max_tokens":32,"temperature":0}`)
	if msg["content"] != "Four." || msg["reasoning_content"] != "Two and two." || finish != "stop" {
		t.Errorf("message %q finish %q", msg, finish)
	}
	_, _, off := chatMessage(t, base, `{"messages":[{"role":"user","content":"2+2?"}],"max_tokens":1,"chat_template_kwargs":{"enable_thinking":false}}`)
	if off["prompt_tokens"].(float64) >= usage["prompt_tokens"].(float64) {
		t.Errorf("prompt tokens: thinking %v, not thinking %v (the /think instructions are the longer)", usage["prompt_tokens"], off["prompt_tokens"])
	}
}

package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/tokenizer"
)

var (
	gptossOnce sync.Once
	gptossDir  string
	gptossErr  error
)

// gptossPlan compiles the tiny gpt-oss preset (MXFP4 experts, the real
// o200k_harmony vocabulary, Harmony chat) for the CPU once per test binary,
// with the orcc TestMain built.
func gptossPlan(t *testing.T) string {
	t.Helper()
	gptossOnce.Do(func() {
		dir := filepath.Dir(orccPath)
		model := filepath.Join(dir, "gpt-oss.gguf")
		if gptossErr = run(orccPath, "synth", "--preset", "gpt-oss-20b-tiny", "--quant", "mxfp4", "-o", model, "--seed", "7"); gptossErr != nil {
			return
		}
		defer os.Remove(model)
		plan := filepath.Join(dir, "gpt-oss.plan")
		if gptossErr = run(orccPath, "compile", model, "-o", plan, "--device", "cpu", "--max-tokens", "64"); gptossErr == nil {
			gptossDir = plan
		}
	})
	if gptossErr != nil {
		t.Fatal(gptossErr)
	}
	return gptossDir
}

// gptossTokenizer is the gpt-oss plan's tokenizer.
func gptossTokenizer(t *testing.T) tokenizer.Tokenizer {
	t.Helper()
	dev, tok := openCPU(t, gptossPlan(t))
	dev.Close()
	return tok
}

// replyIDs encodes a reply written as text: frame and tag tokens become
// their ids, and "‖" splits the text into pieces encoded separately, so a
// test can cut a word (a channel name) across tokens.
func replyIDs(tok tokenizer.Tokenizer, reply string) []int32 {
	var ids []int32
	for _, piece := range strings.Split(reply, "‖") {
		ids = append(ids, tok.Encode(piece, true)...)
	}
	return ids
}

// channelText is text of one channel, consecutive pieces merged.
type channelText struct{ Channel, Text string }

// parseReply drives a reply parser with ids one at a time, then flushes.
func parseReply(t *testing.T, p detokenizer, ids []int32) []channelText {
	t.Helper()
	var out []channelText
	add := func(ch, text string) {
		if !utf8.ValidString(text) {
			t.Errorf("piece %q of channel %s is not valid UTF-8", text, ch)
		}
		if text == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Channel == ch {
			out[n-1].Text += text
			return
		}
		out = append(out, channelText{ch, text})
	}
	for _, id := range ids {
		add(p.push(id))
	}
	add(p.flush())
	return out
}

func TestHarmonyParser(t *testing.T) {
	tok := gptossTokenizer(t)
	// 🦙 spans several byte-level tokens; the parser must hold its bytes
	// back until the character is complete.
	if ids := tok.Encode("🦙", false); len(ids) < 2 {
		t.Fatalf("🦙 is %d token(s); the split-character case needs a character of several tokens", len(ids))
	}
	plain := func(s string) []int32 { return tok.Encode(s, false) }
	cases := []struct {
		name string
		ids  []int32
		want []channelText
	}{
		{"analysis then final",
			replyIDs(tok, "<|channel|>analysis<|message|>Think first.<|end|><|start|>assistant<|channel|>final<|message|>Hi 🦙!<|return|>"),
			[]channelText{{"analysis", "Think first."}, {"final", "Hi 🦙!"}}},
		{"channel name cut across tokens",
			replyIDs(tok, "<|channel|>ana‖lys‖is<|message|>a<|end|><|start|>assistant<|channel|>fi‖nal<|message|>b<|return|>"),
			[]channelText{{"analysis", "a"}, {"final", "b"}}},
		// Frame text written as plain text is message text, not a frame:
		// the parser reads ids.
		{"frame characters inside a message",
			slices.Concat(replyIDs(tok, "<|channel|>final<|message|>"), plain("write <|end|> then <|return|>"), replyIDs(tok, "<|return|>")),
			[]channelText{{"final", "write <|end|> then <|return|>"}}},
		{"commentary with a recipient",
			replyIDs(tok, "<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>{\"q\":1}<|call|>"),
			[]channelText{{"commentary", "{\"q\":1}"}}},
		{"missing <|end|> between messages",
			replyIDs(tok, "<|channel|>analysis<|message|>a<|start|>assistant<|channel|>final<|message|>b"),
			[]channelText{{"analysis", "a"}, {"final", "b"}}},
		{"<|channel|> without <|start|>assistant",
			replyIDs(tok, "<|channel|>analysis<|message|>a<|end|><|channel|>final<|message|>b<|return|>"),
			[]channelText{{"analysis", "a"}, {"final", "b"}}},
		{"nothing after <|return|>",
			replyIDs(tok, "<|channel|>final<|message|>done<|return|>more<|start|>assistant<|channel|>final<|message|>x"),
			[]channelText{{"final", "done"}}},
		{"text outside a message is dropped",
			replyIDs(tok, "<|channel|>final<|message|>a<|end|>stray text<|start|>assistant<|channel|>final<|message|>b<|return|>"),
			[]channelText{{"final", "ab"}}},
		// max_tokens ends the reply inside a character: the tail is U+FFFD.
		{"flush inside a character",
			slices.Concat(replyIDs(tok, "<|channel|>final<|message|>x"), plain("🦙")[:1]),
			[]channelText{{"final", "x\uFFFD"}}},
	}
	frames, err := harmonyTokensOf(tok)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got := parseReply(t, newHarmonyParser(tok, frames), c.ids)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestHarmonyStopIDs: <|return|> and <|call|> end a gpt-oss reply, <|end|>
// (which closes the analysis message) must not.
func TestHarmonyStopIDs(t *testing.T) {
	tok := gptossTokenizer(t)
	if tok.Info().Chat != tokenizer.ChatHarmony {
		t.Fatalf("gpt-oss plan chat kind %q, want %q", tok.Info().Chat, tokenizer.ChatHarmony)
	}
	frames, err := harmonyTokensOf(tok)
	if err != nil {
		t.Fatal(err)
	}
	stops := tok.Info().StopIDs
	if !slices.Contains(stops, frames.ret) || !slices.Contains(stops, frames.call) || slices.Contains(stops, frames.end) {
		t.Errorf("stop ids %v: want <|return|> %d and <|call|> %d, not <|end|> %d", stops, frames.ret, frames.call, frames.end)
	}
}

func TestHarmonyTokensMissing(t *testing.T) {
	_, tok := openCPU(t, testPlans["qwen"]) // ChatML: no Harmony frames
	if _, err := harmonyTokensOf(tok); err == nil || !strings.Contains(err.Error(), "<|start|>") {
		t.Errorf("harmonyTokensOf on a ChatML vocabulary: %v, want an error naming <|start|>", err)
	}
}

// scriptedDevice runs the real CPU device but raises, at every step, the
// logit of the script's next id above all others, so that greedy decoding
// generates the script: a Harmony reply that random weights never write.
type scriptedDevice struct {
	runtime.Device
	script []int32
}

func (d *scriptedDevice) NewSequence(ctxLen int) (runtime.Sequence, error) {
	seq, err := d.Device.NewSequence(ctxLen)
	if err != nil {
		return nil, err
	}
	return &scriptedSequence{Sequence: seq, script: d.script}, nil
}

type scriptedSequence struct {
	runtime.Sequence
	script []int32
	next   int // index in script of the id the next logits pick
	logits []float32
}

func (s *scriptedSequence) Forward(ctx context.Context, tokens []int32) ([]float32, error) {
	logits, err := s.Sequence.Forward(ctx, tokens)
	if err != nil {
		return nil, err
	}
	// A step that does not feed back the last scripted id is a prefill chunk:
	// the script starts after the last one.
	if s.next == 0 || len(tokens) != 1 || tokens[0] != s.script[s.next-1] {
		s.next = 0
	}
	if s.next >= len(s.script) {
		return logits, nil
	}
	s.logits = append(s.logits[:0], logits...)
	s.logits[s.script[s.next]] = slices.Max(logits) + 100
	s.next++
	return s.logits, nil
}

// harmonyServer serves the gpt-oss plan on the CPU device; with a script,
// greedy replies follow it.
func harmonyServer(t *testing.T, reply string) (*httptest.Server, tokenizer.Tokenizer) {
	t.Helper()
	dev, tok := openCPU(t, gptossPlan(t))
	if reply != "" {
		dev = &scriptedDevice{Device: dev, script: replyIDs(tok, reply)}
	}
	return httptestServer(t, serveDevice(t, dev, tok, Config{})), tok
}

// httptestServer serves srv on a loopback socket until the test ends.
func httptestServer(t *testing.T, srv *Server) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs
}

const scriptedReply = "<|channel|>analysis<|message|>The user greets; answer warmly.<|end|>" +
	"<|start|>assistant<|channel|>final<|message|>Hello 🦙 friend!<|return|>"

// chatMessage posts a non-streaming chat completion and returns its choice.
func chatMessage(t *testing.T, base, body string) (msg map[string]any, finish string, usage map[string]any) {
	t.Helper()
	r, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var m struct {
		Object  string
		Choices []struct {
			Message      map[string]any
			FinishReason string `json:"finish_reason"`
		}
		Usage map[string]any
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || r.StatusCode != 200 || m.Object != "chat.completion" || len(m.Choices) != 1 {
		t.Fatalf("chat completion: status %d, %+v, %v", r.StatusCode, m, err)
	}
	return m.Choices[0].Message, m.Choices[0].FinishReason, m.Usage
}

// TestHarmonyChatCompletion: the final channel is content, the analysis
// channel reasoning_content, and <|return|> ends the reply (finish "stop").
func TestHarmonyChatCompletion(t *testing.T) {
	hs, _ := harmonyServer(t, scriptedReply)
	msg, finish, _ := chatMessage(t, hs.URL, `{"messages":[{"role":"user","content":"Hi!"}],"max_tokens":64,"temperature":0}`)
	if msg["role"] != "assistant" || msg["content"] != "Hello 🦙 friend!" || msg["reasoning_content"] != "The user greets; answer warmly." || finish != "stop" {
		t.Errorf("message %q finish %q", msg, finish)
	}
	// A stop string ends the final channel; the analysis is whole.
	msg, finish, _ = chatMessage(t, hs.URL, `{"messages":[{"role":"user","content":"Hi!"}],"max_tokens":64,"temperature":0,"stop":["friend"]}`)
	if msg["content"] != "Hello 🦙 " || msg["reasoning_content"] != "The user greets; answer warmly." || finish != "stop" {
		t.Errorf("with stop string: message %q finish %q", msg, finish)
	}
	// A stop string does not span two messages, and the text held back at
	// the end of the analysis ("warmly.") stays in the analysis.
	msg, _, _ = chatMessage(t, hs.URL, `{"messages":[{"role":"user","content":"Hi!"}],"max_tokens":64,"temperature":0,"stop":["warmly.Hello"]}`)
	if msg["content"] != "Hello 🦙 friend!" || msg["reasoning_content"] != "The user greets; answer warmly." {
		t.Errorf("with a stop string across messages: message %q", msg)
	}
}

// TestHarmonyChatStream: streamed deltas carry reasoning_content, then
// content, never both in one chunk, and no frame token text.
func TestHarmonyChatStream(t *testing.T) {
	hs, _ := harmonyServer(t, scriptedReply)
	reasoning, content, order := streamChat(t, hs.URL, `{"messages":[{"role":"user","content":"Hi!"}],"max_tokens":64,"temperature":0,"stream":true}`)
	if reasoning != "The user greets; answer warmly." || content != "Hello 🦙 friend!" {
		t.Errorf("stream: reasoning %q content %q", reasoning, content)
	}
	if i := slices.Index(order, "content"); i < 1 || slices.Contains(order[i:], "reasoning") {
		t.Errorf("chunk order %v: want reasoning chunks, then content chunks", order)
	}
}

// streamChat posts a streaming chat completion and returns its reasoning
// and content and, per chunk with text, which of the two it carried; the
// stream must end with finish_reason "stop" and [DONE], and no chunk may
// carry both.
func streamChat(t *testing.T, base, body string) (reasoning, content string, order []string) {
	t.Helper()
	r, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var rb, cb strings.Builder
	var finish string
	done := false
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta        map[string]string
				FinishReason *string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("chunk %s: %v", line, err)
		}
		d := c.Choices[0].Delta
		if d["reasoning_content"] != "" && d["content"] != "" {
			t.Errorf("chunk %s carries both channels", line)
		}
		if s := d["reasoning_content"]; s != "" {
			rb.WriteString(s)
			order = append(order, "reasoning")
		}
		if s := d["content"]; s != "" {
			cb.WriteString(s)
			order = append(order, "content")
		}
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	if finish != "stop" || !done {
		t.Errorf("stream ended with finish %q, [DONE] %v", finish, done)
	}
	return rb.String(), cb.String(), order
}

// TestHarmonyExecuteRaw: the worker API streams what the model generates,
// frame tokens included as text.
func TestHarmonyExecuteRaw(t *testing.T) {
	hs, _ := harmonyServer(t, scriptedReply)
	evs := collect(t, postExecute(t, hs.URL, map[string]any{"job_id": "raw", "prompt": "<|start|>user<|message|>Hi!<|end|><|start|>assistant", "max_tokens": 64, "temperature": 0}))
	want := strings.TrimSuffix(scriptedReply, "<|return|>") // a stop id is not text
	if got := textOf(evs); got != want {
		t.Errorf("/execute text %q, want %q", got, want)
	}
}

// TestHarmonyRandomWeights: the real gpt-oss plan, unscripted, reports its
// file type and tokenizer on /health and answers a chat completion in the
// Harmony shape (random weights write no frames, so both fields may be
// empty; the shape is what is checked).
func TestHarmonyRandomWeights(t *testing.T) {
	hs, _ := harmonyServer(t, "")
	r, err := http.Get(hs.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]any
	json.NewDecoder(r.Body).Decode(&health)
	r.Body.Close()
	if health["quant_kind"] != "MXFP4_MOE" || health["tokenizer_kind"] != tokenizer.KindGGUF || health["arch"] != "gpt-oss" {
		t.Errorf("/health of the gpt-oss plan: quant_kind %v tokenizer_kind %v arch %v", health["quant_kind"], health["tokenizer_kind"], health["arch"])
	}
	msg, finish, usage := chatMessage(t, hs.URL, `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi!"}],"max_tokens":6,"temperature":0}`)
	_, isContent := msg["content"].(string)
	_, isReasoning := msg["reasoning_content"].(string)
	n, _ := usage["completion_tokens"].(float64)
	if msg["role"] != "assistant" || !isContent || !isReasoning || n < 1 || n > 6 || (finish != "length" && finish != "stop") {
		t.Errorf("message %q finish %q usage %v", msg, finish, usage)
	}
}

package server

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/tokenizer"
)

// A generation that fills the context ends with stop_reason "context", not
// "max_tokens", though the request asked for more tokens than fit.
func TestStopReasonContext(t *testing.T) {
	srv, hs := startServer(t, "stories", Config{})
	prompt := strings.Repeat("Once upon a time there was a cat. ", 40)
	n := len(tokenizer.EncodePrompt(srv.tok, prompt))
	room := srv.info.ContextLength - n
	if room < 1 || room >= 200 {
		t.Fatalf("the prompt is %d tokens of %d: want room for 1 to 199 more", n, srv.info.ContextLength)
	}
	evs := collect(t, postExecute(t, hs.URL, map[string]any{"job_id": "full", "prompt": prompt, "max_tokens": 200, "temperature": 0}))
	end := evs[len(evs)-1]
	if end.Name != evEnd || end.Data["stop_reason"] != "context" || int(end.Data["tokens_out"].(float64)) != room {
		t.Fatalf("end %s %v, want stop_reason context after %d tokens", end.Name, end.Data, room)
	}
}

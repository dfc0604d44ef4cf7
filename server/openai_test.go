package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/llama-orch/orc/internal/openaisdk"
)

func TestOpenAINodeSDKStreamsChat(t *testing.T) {
	_, hs := startServer(t, "qwen", Config{})
	got := openaisdk.StreamChat(t, hs.URL+"/v1", "orc")
	if got.Role != "assistant" || got.Chunks == 0 || got.Content == "" || got.Finish != "length" {
		t.Fatalf("streamed chat %+v: want role assistant, content in chunks, finish length", got)
	}
}

func TestOpenAIShapes(t *testing.T) {
	_, hs := startServer(t, "qwen", Config{})
	post := func(path, body string) (int, map[string]any) {
		r, err := http.Post(hs.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		return r.StatusCode, m
	}
	code, m := post("/v1/chat/completions", `{"model":"x","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"temperature":0}`)
	choices, _ := m["choices"].([]any)
	if code != 200 || m["object"] != "chat.completion" || len(choices) != 1 {
		t.Fatalf("chat: %d %v", code, m)
	}
	msg := choices[0].(map[string]any)["message"].(map[string]any)
	if msg["role"] != "assistant" || m["usage"].(map[string]any)["completion_tokens"].(float64) != 4 {
		t.Fatalf("chat body %v", m)
	}
	code, m = post("/v1/chat/completions", `{"messages":[],"max_tokens":4}`)
	e, _ := m["error"].(map[string]any)
	if code != 400 || e["type"] != "invalid_request_error" || e["param"] != "messages" {
		t.Fatalf("empty messages: %d %v", code, m)
	}
	code, m = post("/v1/completions", `{"prompt":"hi","temperature":9}`)
	if e, _ := m["error"].(map[string]any); code != 400 || e["param"] != "temperature" {
		t.Fatalf("bad temperature: %d %v", code, m)
	}
	r, _ := http.Get(hs.URL + "/v1/models")
	var models struct {
		Object string
		Data   []struct{ ID string }
	}
	json.NewDecoder(r.Body).Decode(&models)
	if models.Object != "list" || len(models.Data) != 1 || models.Data[0].ID == "" {
		t.Fatalf("/v1/models %+v", models)
	}
}

package orchestrator

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/internal/openaisdk"
)

// The official OpenAI Node SDK streams a chat through orcd, routed by
// model to the qwen pool (whose worker applies the ChatML template).
func TestOpenAINodeSDKStreamsChatThroughOrcd(t *testing.T) {
	d := system(t)
	got := openaisdk.StreamChat(t, d.url+"/v1", d.o.registration("qwen").Model)
	if got.Role != "assistant" || got.Chunks == 0 || got.Content == "" || got.Finish != "length" {
		t.Fatalf("streamed chat %+v: want role assistant, content in chunks, finish length", got)
	}
}

// /v1/models lists each served model once; a request for a model no pool
// serves is refused in OpenAI's shape; completions route by model.
func TestOpenAIRoutesByModel(t *testing.T) {
	d := system(t)
	_, m := call(t, "GET", d.url+"/v1/models", nil)
	data := m["data"].([]any)
	var ids []string
	for _, x := range data {
		ids = append(ids, x.(map[string]any)["id"].(string))
	}
	if len(ids) != 2 || !strings.Contains(strings.Join(ids, ","), storiesModel) {
		t.Fatalf("/v1/models: %v", m)
	}
	resp, e := call(t, "POST", d.url+"/v1/completions", map[string]any{"model": "gpt-17", "prompt": "hi"})
	if resp.StatusCode != 400 || e["error"].(map[string]any)["type"] != "invalid_request_error" {
		t.Fatalf("unknown model: %d %v", resp.StatusCode, e)
	}
	resp, c := call(t, "POST", d.url+"/v1/completions", map[string]any{"model": storiesModel, "prompt": "Once upon a time", "max_tokens": 6, "temperature": 0})
	choices, _ := c["choices"].([]any)
	if resp.StatusCode != 200 || c["model"] != storiesModel || len(choices) != 1 || choices[0].(map[string]any)["text"] == "" {
		t.Fatalf("completion: %d %v", resp.StatusCode, c)
	}
}

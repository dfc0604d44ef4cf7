package orchestrator

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The official OpenAI Node SDK streams a chat through orcd, routed by
// model to the qwen pool (whose worker applies the ChatML template).
func TestOpenAINodeSDKStreamsChatThroughOrcd(t *testing.T) {
	client := filepath.Join("..", "server", "testdata", "openai-client")
	if _, err := os.Stat(filepath.Join(client, "node_modules", "openai")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the OpenAI SDK is not installed (scripts/setup.d/30-openai-node.sh): %v", err)
		}
		t.Skip("OpenAI Node SDK not installed; run make setup")
	}
	d := system(t)
	model := d.o.registration("qwen").Model
	out, err := exec.Command("node", filepath.Join(client, "chat.mjs"), d.url+"/v1", model).CombinedOutput()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var got struct {
		Role, Content, Finish string
		Chunks                int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
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

// Package openaisdk streams a chat with the official OpenAI Node SDK
// (installed by scripts/setup.d/30-openai-node.sh), for the tests of orc's
// OpenAI-compatible servers.
package openaisdk

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Chat is what the client saw of one streamed chat completion.
type Chat struct {
	Role, Content, Finish string
	Chunks                int
}

// StreamChat streams a chat for model from the server at baseURL (ending in
// /v1). Without the SDK the test is skipped, or fails under CI.
func StreamChat(t testing.TB, baseURL, model string) Chat {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	client := filepath.Join(filepath.Dir(file), "..", "..", "server", "testdata", "openai-client")
	if _, err := os.Stat(filepath.Join(client, "node_modules", "openai")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the OpenAI SDK is not installed (scripts/setup.d/30-openai-node.sh): %v", err)
		}
		t.Skip("OpenAI Node SDK not installed; run make setup")
	}
	out, err := exec.Command("node", filepath.Join(client, "chat.mjs"), baseURL, model).CombinedOutput()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var got Chat
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	return got
}

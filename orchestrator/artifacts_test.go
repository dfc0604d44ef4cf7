package orchestrator

import (
	"path/filepath"
	"strings"
	"testing"
)

// OC-CTRL-2065: artifacts are stored under content addresses with tags;
// the same content twice is one artifact.
func TestOCCTRL2065PutArtifact(t *testing.T) {
	d := system(t)
	body := map[string]any{"kind": "plan", "content": map[string]any{"steps": []string{"a", "b"}}, "tags": []string{"x"}}
	resp, a := call(t, "POST", d.url+"/v1/artifacts", body)
	id, _ := a["id"].(string)
	if resp.StatusCode != 201 || !strings.HasPrefix(id, "sha256:") || len(id) != 7+64 {
		t.Fatalf("put: %d %v", resp.StatusCode, a)
	}
	body["tags"] = []string{"y"}
	resp, b := call(t, "POST", d.url+"/v1/artifacts", body)
	if resp.StatusCode != 200 || b["id"] != id || len(b["tags"].([]any)) != 2 || b["created_at"] != a["created_at"] {
		t.Fatalf("same content again: %d %v", resp.StatusCode, b)
	}
	child := map[string]any{"kind": "summary", "content": "short", "lineage": []string{id}}
	if resp, c := call(t, "POST", d.url+"/v1/artifacts", child); resp.StatusCode != 201 || c["lineage"].([]any)[0] != id {
		t.Fatalf("child: %d %v", resp.StatusCode, c)
	}
	for _, bad := range []map[string]any{{"kind": "", "content": 1}, {"kind": "k"}, {"kind": "k", "content": 1, "lineage": []string{"sha256:00"}}} {
		if resp, m := call(t, "POST", d.url+"/v1/artifacts", bad); resp.StatusCode != 400 || m["code"] != CodeInvalidParams {
			t.Fatalf("%v: %d %v", bad, resp.StatusCode, m)
		}
	}
}

// OC-CTRL-2066: an artifact is read back by id, with its metadata, from
// the database file, also after orcd restarts on it.
func TestOCCTRL2066GetArtifactPersists(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	d, err := newOrcd(Config{}, db)
	if err != nil {
		t.Fatal(err)
	}
	_, a := call(t, "POST", d.url+"/v1/artifacts", map[string]any{"kind": "trace", "content": []int{1, 2}, "tags": []string{"t"}})
	d.close()
	d, err = newOrcd(Config{}, db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	resp, got := call(t, "GET", d.url+"/v1/artifacts/"+a["id"].(string), nil)
	if resp.StatusCode != 200 || got["kind"] != "trace" || got["tags"].([]any)[0] != "t" || got["created_at"] == "" || got["lineage"] == nil {
		t.Fatalf("after a restart: %d %v", resp.StatusCode, got)
	}
	if resp, _ := call(t, "GET", d.url+"/v1/artifacts/sha256:beef", nil); resp.StatusCode != 404 {
		t.Fatalf("unknown artifact: %d", resp.StatusCode)
	}
	if _, err := newOrcd(Config{}, db); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a second orcd on the same file: %v", err)
	}
}

// OC-CTRL-2067: each job leaves a record, failures too: params without the
// prompt, seed, tokens_out, decode_time_ms and the SSE transcript.
func TestOCCTRL2067JobRecords(t *testing.T) {
	d := system(t)
	const prompt = "Once upon a time"
	ok := submit(t, d, map[string]any{"model": storiesModel, "prompt": prompt, "max_tokens": 6, "seed": 5, "session_id": "rec"})
	stream(t, d, ok)
	bad := submit(t, d, map[string]any{"model": storiesModel, "prompt": prompt, "max_tokens": 200})
	call(t, "POST", d.url+"/v1/tasks/"+bad+"/cancel", nil)
	for id, outcome := range map[string]string{ok: "end", bad: CodeCancelled} {
		art := jobArtifact(t, d, id)
		c := art["content"].(map[string]any)
		p := c["params"].(map[string]any)
		if art["kind"] != "job" || c["job_id"] != id || c["outcome"] != outcome || p["prompt_chars"].(float64) != float64(len(prompt)) ||
			p["model"] != storiesModel || p["engine"] != Engine || p["max_tokens"] == nil {
			t.Fatalf("job %s record %v", id, c)
		}
		if tr := c["transcript"].(string); !strings.HasPrefix(tr, "event: started\n") || strings.Contains(art["content"].(map[string]any)["transcript"].(string)+p["prompt_sha256"].(string), prompt) {
			t.Fatalf("job %s transcript %q", id, tr)
		}
		if outcome == "end" && (c["tokens_out"].(float64) != 6 || c["session_id"] != "rec" || c["decode_time_ms"] == nil || c["seed"].(float64) != 5) {
			t.Fatalf("job %s record %v", id, c)
		}
		if outcome != "end" && c["error"].(map[string]any)["code"] != CodeCancelled {
			t.Fatalf("failed job %s record %v", id, c)
		}
	}
}

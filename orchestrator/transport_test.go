package orchestrator

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llama-orch/orc/internal/soak"
	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// OC-CTRL-2025: the stream is served over unencrypted HTTP/2 to a client
// that asks with prior knowledge, and over HTTP/1.1 to the rest; a client
// offering gzip gets no compression.
func TestOCCTRL2025HTTP2AndFallback(t *testing.T) {
	d := system(t)
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	clients := map[int]*http.Client{
		2: {Transport: &http.Transport{Protocols: &h2}},
		1: {Transport: &http.Transport{TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}},
	}
	for proto, c := range clients {
		id := submit(t, d, map[string]any{"model": storiesModel, "prompt": "Once", "max_tokens": 5})
		req, _ := http.NewRequest("GET", d.url+"/v1/tasks/"+id+"/stream", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var evs []soak.Event
		soak.ReadEvents(resp.Body, func(e soak.Event) bool { evs = append(evs, e); return true })
		resp.Body.Close()
		if resp.ProtoMajor != proto || resp.Header.Get("Content-Encoding") != "" || checkFraming(t, evs).Name != "end" {
			t.Fatalf("HTTP/%d client: got %s, Content-Encoding %q, events %v", proto, resp.Proto, resp.Header.Get("Content-Encoding"), names(evs))
		}
	}
}

// OC-CTRL-2026: relaying a token costs no heap allocation: the worker's
// event bytes are appended to the transcript as they are (a metrics frame
// every 64 tokens amortises to well under one allocation per token).
func TestOCCTRL2026NoAllocationPerToken(t *testing.T) {
	o, err := New(Config{ArtifactsPath: filepath.Join(t.TempDir(), "a.db"), PoolToken: "x", Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	w := &worker{Worker: poolapi.Worker{ID: "w"}, pool: &pool{id: "p"}}
	const n = 20000
	var wire bytes.Buffer
	wire.WriteString("event: started\ndata: {\"job_id\":\"j\",\"seed\":1}\n\n")
	for i := range n {
		fmt.Fprintf(&wire, "event: token\ndata: {\"t\":\" word\",\"i\":%d}\n\n", i)
	}
	raw := wire.Bytes()
	var tk *task
	allocs := testing.AllocsPerRun(1, func() {
		tk = newTask("t", "c", TaskRequest{})
		tk.buf = make([]byte, 0, len(raw)+(n/metricsEvery+2)*256)
		o.relayStream(context.Background(), tk, w, bufio.NewReaderSize(bytes.NewReader(raw), 16<<10))
	})
	if tk.tokens != n {
		t.Fatalf("relayed %d tokens", tk.tokens)
	}
	if per := allocs / n; per > 0.1 { // a frame allocating once per token would give ≥ 1
		t.Fatalf("%.0f allocations for %d tokens: %.3f per token", allocs, n, per)
	}
	t.Logf("%.0f allocations for %d tokens", allocs, n)
}

// OC-CTRL-2052: X-Correlation-Id is echoed on every response and stream,
// or generated as a UUIDv4, and it is in the log lines.
func TestOCCTRL2052CorrelationID(t *testing.T) {
	d := system(t)
	resp, m := call(t, "POST", d.url+"/v1/tasks", map[string]any{"model": storiesModel, "prompt": "Once", "max_tokens": 2}, "X-Correlation-Id", "corr-abc")
	if resp.Header.Get("X-Correlation-Id") != "corr-abc" {
		t.Fatalf("submit echoed %q", resp.Header.Get("X-Correlation-Id"))
	}
	req, _ := http.NewRequest("GET", d.url+"/v1/tasks/"+m["task_id"].(string)+"/stream", nil)
	req.Header.Set("X-Correlation-Id", "corr-stream")
	sresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sresp.Body.Close()
	if sresp.Header.Get("X-Correlation-Id") != "corr-stream" {
		t.Fatalf("stream echoed %q", sresp.Header.Get("X-Correlation-Id"))
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, path := range []string{"/v1/capabilities", "/v1/pools/nope/health", "/v1/replicasets", "/metrics"} {
		resp, _ := call(t, "GET", d.url+path, nil)
		if !uuid.MatchString(resp.Header.Get("X-Correlation-Id")) {
			t.Fatalf("%s: generated id %q", path, resp.Header.Get("X-Correlation-Id"))
		}
	}
	if !strings.Contains(d.logs.String(), `"correlation_id":"corr-abc"`) {
		t.Fatal("the admission log line lacks the correlation id")
	}
}

// OC-CTRL-2041: no prompt, API key or token in any log line: orcd's,
// orcpool's or the workers'.
func TestOCCTRL2041NoSecretsInLogs(t *testing.T) {
	sys := system(t)
	d := startOrcd(t, Config{APIKey: "api-key-xyzzy"})
	mirrorPool(t, sys, d, "stories", 2)
	const prompt = "Once upon a plugh-secret time"
	resp, m := call(t, "POST", d.url+"/v1/tasks", map[string]any{"prompt": prompt, "max_tokens": 4}, "Authorization", "Bearer api-key-xyzzy")
	if resp.StatusCode != 202 {
		t.Fatalf("submit with the key: %d %v", resp.StatusCode, m)
	}
	req, _ := http.NewRequest("GET", d.url+"/v1/tasks/"+m["task_id"].(string)+"/stream", nil)
	req.Header.Set("Authorization", "Bearer api-key-xyzzy")
	sresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	soak.ReadEvents(sresp.Body, func(soak.Event) bool { return true })
	sresp.Body.Close()
	call(t, "POST", d.url+"/v1/tasks", map[string]any{"prompt": prompt}, "Authorization", "Bearer wrong-key-plover")
	logs := d.logs.String()
	for _, p := range shared.pools {
		logs += p.logs.String()
	}
	for _, secret := range []string{"plugh", "xyzzy", "plover", poolToken} {
		if strings.Contains(logs, secret) {
			t.Fatalf("logs contain %q", secret)
		}
	}
	if !strings.Contains(d.logs.String(), `"prompt_chars":29`) {
		t.Fatal("the admission log line lacks prompt_chars")
	}
}

// OC-CTRL-2040: the home profile on loopback needs no key; with an API key
// the public API needs it; the internal endpoints always need the pool
// token.
func TestOCCTRL2040AuthProfiles(t *testing.T) {
	d := system(t)
	if resp, _ := call(t, "GET", d.url+"/v1/capabilities", nil); resp.StatusCode != 200 {
		t.Fatalf("home profile: %d", resp.StatusCode)
	}
	if resp, _ := call(t, "PUT", d.url+"/v2/internal/pools/x", map[string]any{}); resp.StatusCode != 401 {
		t.Fatalf("internal endpoint without the token: %d", resp.StatusCode)
	}
	keyed := startOrcd(t, Config{APIKey: "k"})
	if resp, m := call(t, "GET", keyed.url+"/v1/capabilities", nil); resp.StatusCode != 401 || m["code"] != CodeUnauthorized {
		t.Fatalf("keyed, no key: %d %v", resp.StatusCode, m)
	}
	if resp, _ := call(t, "GET", keyed.url+"/v1/capabilities", nil, "Authorization", "Bearer k"); resp.StatusCode != 200 {
		t.Fatalf("keyed, with key: %d", resp.StatusCode)
	}
}

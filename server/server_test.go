package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestValidationRules(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	long := strings.Repeat("a", maxPromptChars+1)
	cases := []struct {
		name, field string
		body        string
	}{
		{"empty job_id", "job_id", `{"job_id":"","prompt":"hi"}`},
		{"blank job_id", "job_id", `{"job_id":"  ","prompt":"hi"}`},
		{"missing prompt", "prompt", `{"job_id":"a"}`},
		{"prompt too long", "prompt", `{"job_id":"a","prompt":"` + long + `"}`},
		{"max_tokens 0", "max_tokens", `{"job_id":"a","prompt":"hi","max_tokens":0}`},
		{"max_tokens 2049", "max_tokens", `{"job_id":"a","prompt":"hi","max_tokens":2049}`},
		{"temperature -0.1", "temperature", `{"job_id":"a","prompt":"hi","temperature":-0.1}`},
		{"temperature 2.01", "temperature", `{"job_id":"a","prompt":"hi","temperature":2.01}`},
		{"top_p 1.5", "top_p", `{"job_id":"a","prompt":"hi","top_p":1.5}`},
		{"top_p -1", "top_p", `{"job_id":"a","prompt":"hi","top_p":-1}`},
		{"top_k -1", "top_k", `{"job_id":"a","prompt":"hi","top_k":-1}`},
		{"top_k past vocab", "top_k", `{"job_id":"a","prompt":"hi","top_k":513}`},
		{"repetition_penalty 2.5", "repetition_penalty", `{"job_id":"a","prompt":"hi","repetition_penalty":2.5}`},
		{"repetition_penalty -1", "repetition_penalty", `{"job_id":"a","prompt":"hi","repetition_penalty":-1}`},
		{"min_p 1.1", "min_p", `{"job_id":"a","prompt":"hi","min_p":1.1}`},
		{"five stop strings", "stop", `{"job_id":"a","prompt":"hi","stop":["a","b","c","d","e"]}`},
		{"empty stop string", "stop", `{"job_id":"a","prompt":"hi","stop":[""]}`},
		{"stop string of 33 tokens", "stop", `{"job_id":"a","prompt":"hi","stop":["` + strings.Repeat("zq ", 40) + `"]}`},
		{"seed negative", "seed", `{"job_id":"a","prompt":"hi","seed":-1}`},
		{"seed too large", "seed", `{"job_id":"a","prompt":"hi","seed":18446744073709551616}`},
		{"unknown field", "bogus", `{"job_id":"a","prompt":"hi","bogus":1}`},
		{"not JSON", "body", `{"job_id":`},
		{"trailing data", "body", `{"job_id":"a","prompt":"hi"} {}`},
		{"not an object", "body", `["a"]`},
		{"wrong type", "max_tokens", `{"job_id":"a","prompt":"hi","max_tokens":"ten"}`},
		{"fractional max_tokens", "max_tokens", `{"job_id":"a","prompt":"hi","max_tokens":1.5}`},
		{"job_id a number", "job_id", `{"job_id":1,"prompt":"hi"}`},
		{"stop not a list", "stop", `{"job_id":"a","prompt":"hi","stop":"x"}`},
		{"stop list of numbers", "stop[0]", `{"job_id":"a","prompt":"hi","stop":[1]}`},
		{"keys in capitals", "JOB_ID", `{"JOB_ID":"a","PROMPT":"hi"}`},
		{"key case mixed", "Prompt", `{"job_id":"a","Prompt":"hi"}`},
		{"invalid UTF-8", "prompt", "{\"job_id\":\"a\",\"prompt\":\"caf\xc3\xa9\xff\"}"},
		{"invalid UTF-8 in job_id", "job_id", "{\"job_id\":\"\xc0\xaf\",\"prompt\":\"hi\"}"},
		{"lone high surrogate", "prompt", `{"job_id":"a","prompt":"x\ud83d"}`},
		{"lone low surrogate", "prompt", `{"job_id":"a","prompt":"\ude00x"}`},
		{"high surrogate, then no low one", "prompt", `{"job_id":"a","prompt":"\ud83d\u0041"}`},
	}
	for _, c := range cases {
		resp, err := http.Post(hs.URL+"/execute", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Code, Message string }
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || body.Code != codeInvalidRequest || !strings.HasPrefix(body.Message, c.field+": ") {
			t.Errorf("%s: status %d, body %+v; want 400 INVALID_REQUEST naming %q", c.name, resp.StatusCode, body, c.field)
		}
		// The answer is in the API's words: no Go type or struct names.
		for _, goWord := range []string{"Go struct", "ExecuteRequest", "uint64", "*", "json:"} {
			if strings.Contains(body.Message, goWord) {
				t.Errorf("%s: message %q speaks Go (%q)", c.name, body.Message, goWord)
			}
		}
	}
	// A surrogate pair is one valid character: accepted.
	evs := collect(t, postExecute(t, hs.URL, json.RawMessage(`{"job_id":"pair","prompt":"Once \ud83d\ude00","max_tokens":2}`)))
	if evs[len(evs)-1].Name != evEnd {
		t.Fatalf("a prompt with a surrogate pair ended with %v", evs[len(evs)-1])
	}
}

func TestEventOrderAndSeedEcho(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	evs := collect(t, postExecute(t, hs.URL, map[string]any{"job_id": "order", "prompt": "Once upon a time", "max_tokens": 20, "temperature": 0}))
	if len(evs) < 3 || evs[0].Name != evStarted || evs[len(evs)-1].Name != evEnd {
		t.Fatalf("events %v: want started, tokens, end", names(evs))
	}
	for i, e := range evs[1 : len(evs)-1] {
		if e.Name != evToken || int(e.Data["i"].(float64)) != i {
			t.Fatalf("event %d is %s %v, want token i=%d", i+1, e.Name, e.Data, i)
		}
	}
	if evs[0].Data["job_id"] != "order" || evs[0].Data["model"] == "" || evs[0].Data["seed"] == nil {
		t.Fatalf("started event %v lacks job_id, model or the generated seed", evs[0].Data)
	}
	end := evs[len(evs)-1].Data
	if end["tokens_out"].(float64) != 20 || end["stop_reason"] != "max_tokens" {
		t.Fatalf("end event %v", end)
	}
	if got := textOf(evs); !strings.Contains(got, "Lily") {
		t.Fatalf("stories260k greedy text %q is not the expected story", got)
	}
}

func names(evs []sseEvent) []string {
	var n []string
	for _, e := range evs {
		n = append(n, e.Name)
	}
	return n
}

func TestSameSeedSameTokens(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	req := func(id string, temp float64) string {
		return textOf(collect(t, postExecute(t, hs.URL, map[string]any{"job_id": id, "prompt": "Once upon a time", "max_tokens": 40, "temperature": temp, "seed": 42})))
	}
	if a, b := req("s1", 0.7), req("s2", 0.7); a != b {
		t.Fatalf("seed 42 at temperature 0.7 gave %q then %q", a, b)
	}
	if a, b := req("g1", 0), req("g2", 0); a != b {
		t.Fatalf("greedy gave %q then %q", a, b)
	}
}

func TestStopStringNotEmitted(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	full := textOf(collect(t, postExecute(t, hs.URL, map[string]any{"job_id": "full", "prompt": "Once upon a time", "max_tokens": 40, "temperature": 0})))
	i := strings.Index(full, "Lily")
	if i < 0 {
		t.Fatalf("greedy text %q has no Lily", full)
	}
	evs := collect(t, postExecute(t, hs.URL, map[string]any{"job_id": "stop", "prompt": "Once upon a time", "max_tokens": 40, "temperature": 0, "stop": []string{"ily"}}))
	if got := textOf(evs); got != full[:i+1] {
		t.Fatalf("with stop \"ily\": %q, want %q", got, full[:i+1])
	}
	if end := evs[len(evs)-1]; end.Name != evEnd || end.Data["stop_reason"] != "stop" {
		t.Fatalf("terminal event %v", end)
	}
}

// longJob starts a job that runs until the context is full (about 500
// decode steps of stories260k, each far shorter than the 100 ms cancel
// bound even on a loaded machine) and returns its event channel once the
// first token arrived.
func longJob(t *testing.T, base, id string) (chan sseEvent, *http.Response) {
	t.Helper()
	resp := postExecute(t, base, map[string]any{"job_id": id, "prompt": "Once upon a time", "max_tokens": 2048, "temperature": 1, "seed": 1})
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	ch := make(chan sseEvent, 4096)
	go readEvents(resp.Body, ch)
	for e := range ch {
		if e.Name == evToken {
			return ch, resp
		}
	}
	t.Fatal("stream ended before a token")
	return nil, nil
}

func TestCancelStopsWithin100ms(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	ch, resp := longJob(t, hs.URL, "cancel-me")
	defer resp.Body.Close()
	time.Sleep(50 * time.Millisecond)
	sent := time.Now()
	cr, err := http.Post(hs.URL+"/cancel", "application/json", strings.NewReader(`{"job_id":"cancel-me"}`))
	if err != nil {
		t.Fatal(err)
	}
	if cr.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel answered %d", cr.StatusCode)
	}
	var ack struct {
		Status          string
		TokensDelivered int `json:"tokens_delivered"`
	}
	json.NewDecoder(cr.Body).Decode(&ack)
	cr.Body.Close()
	tokens := 1 // longJob consumed the first
	var last sseEvent
	for e := range ch {
		if e.Name == evToken {
			tokens++
		}
		last = e
	}
	if ack.Status != "cancelled" || tokens != ack.TokensDelivered {
		t.Fatalf("cancel said %+v, the client got %d tokens: a token was sent after the cancel", ack, tokens)
	}
	if last.Name != evError || last.Data["code"] != codeCancelled {
		t.Fatalf("terminal event %v, want error CANCELLED", last)
	}
	if d := last.At.Sub(sent); d > 100*time.Millisecond {
		t.Fatalf("stream ended %v after the cancel, want ≤ 100ms", d)
	}
	again, _ := http.Post(hs.URL+"/cancel", "application/json", strings.NewReader(`{"job_id":"cancel-me"}`))
	if again.StatusCode != http.StatusAccepted {
		t.Fatalf("repeated cancel answered %d, want 202", again.StatusCode)
	}
}

func TestDisconnectAbortsJob(t *testing.T) {
	srv, hs := startServer(t, "stories", Config{})
	_, resp := longJob(t, hs.URL, "gone")
	resp.Body.Close() // the client goes away mid-stream
	deadline := time.Now().Add(2 * time.Second)
	for srv.sched.lookup("gone") != nil {
		if time.Now().After(deadline) {
			t.Fatal("job still running 2s after its client disconnected")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The device is free again: the next request is served at once.
	evs := collect(t, postExecute(t, hs.URL, map[string]any{"job_id": "next", "prompt": "hello", "max_tokens": 3}))
	if evs[len(evs)-1].Name != evEnd {
		t.Fatalf("next job ended with %v", evs[len(evs)-1])
	}
	var m bytes.Buffer
	srv.metrics.write(&m)
	if !strings.Contains(m.String(), `orc_requests_total{outcome="cancelled"} 1`) {
		t.Fatalf("metrics do not count the aborted job:\n%s", m.String())
	}
}

// fillQueue starts a long job and queues one behind it: a server with
// QueueSize 1 then refuses the next with 429 until the test ends.
func fillQueue(t *testing.T, base string) {
	t.Helper()
	_, running := longJob(t, base, "running")
	t.Cleanup(func() { running.Body.Close() })
	queued := postExecute(t, base, map[string]any{"job_id": "queued", "prompt": "hello", "max_tokens": 2})
	t.Cleanup(func() { queued.Body.Close() })
}

func TestQueueFullGets429(t *testing.T) {
	_, hs := startServer(t, "stories", Config{QueueSize: 1})
	fillQueue(t, hs.URL)
	refused := postExecute(t, hs.URL, map[string]any{"job_id": "refused", "prompt": "hello", "max_tokens": 2})
	refused.Body.Close()
	if refused.StatusCode != http.StatusTooManyRequests || refused.Header.Get("Retry-After") == "" {
		t.Fatalf("third job: status %d, Retry-After %q; want 429 with Retry-After", refused.StatusCode, refused.Header.Get("Retry-After"))
	}
	dup := postExecute(t, hs.URL, map[string]any{"job_id": "running", "prompt": "hello"})
	dup.Body.Close()
	if dup.StatusCode != http.StatusConflict && dup.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("duplicate job id: status %d", dup.StatusCode)
	}
}

func TestInferenceTimeout(t *testing.T) {
	_, hs := startServer(t, "qwen", Config{InferenceTimeout: 300 * time.Millisecond})
	evs := collect(t, postExecute(t, hs.URL, map[string]any{"job_id": "slow", "prompt": "hello", "max_tokens": 2048}))
	if last := evs[len(evs)-1]; last.Name != evError || last.Data["code"] != codeInferenceTimeout {
		t.Fatalf("terminal event %v, want INFERENCE_TIMEOUT", last)
	}
}

func TestShutdownDrains(t *testing.T) {
	srv, hs := startServer(t, "stories", Config{})
	resp := postExecute(t, hs.URL, map[string]any{"job_id": "last", "prompt": "Once upon a time", "max_tokens": 200, "temperature": 0})
	ch := make(chan sseEvent, 512)
	go readEvents(resp.Body, ch)
	sd, _ := http.Post(hs.URL+"/shutdown", "application/json", nil)
	if sd.StatusCode != http.StatusAccepted {
		t.Fatalf("shutdown answered %d", sd.StatusCode)
	}
	<-srv.ShutdownRequested()
	drained := make(chan struct{})
	go func() { srv.Drain(); close(drained) }()
	time.Sleep(10 * time.Millisecond)
	late := postExecute(t, hs.URL, map[string]any{"job_id": "late", "prompt": "hi"})
	late.Body.Close()
	if late.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("request during shutdown: status %d, want 503", late.StatusCode)
	}
	var last sseEvent
	for e := range ch {
		last = e
	}
	if last.Name != evEnd {
		t.Fatalf("the active job ended with %v, want it to finish", last)
	}
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("Drain did not return")
	}
}

func TestHealthAndMetrics(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	collect(t, postExecute(t, hs.URL, map[string]any{"job_id": "m", "prompt": "Once", "max_tokens": 3}))
	resp, err := http.Get(hs.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	for _, k := range []string{"status", "model", "resident", "quant_kind", "vram_bytes_used", "tokenizer_kind", "vocab_size", "context_length", "uptime_seconds", "sm", "cuda_runtime_version"} {
		if _, ok := h[k]; !ok {
			t.Errorf("/health lacks %q: %v", k, h)
		}
	}
	if h["status"] != statusReady || h["vocab_size"].(float64) != 512 || h["context_length"].(float64) != 512 {
		t.Errorf("/health %v", h)
	}
	if resp.Header.Get("X-Correlation-Id") == "" {
		t.Error("no X-Correlation-Id on the response")
	}
	req, _ := http.NewRequest("GET", hs.URL+"/metrics", nil)
	req.Header.Set("X-Correlation-Id", "abc-123")
	mr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(mr.Body)
	mr.Body.Close()
	if mr.Header.Get("X-Correlation-Id") != "abc-123" {
		t.Errorf("X-Correlation-Id not echoed: %q", mr.Header.Get("X-Correlation-Id"))
	}
	for _, name := range []string{`orc_requests_total{outcome="ok"} 1`, "orc_tokens_generated_total 3", "orc_time_to_first_token_seconds_bucket", "orc_decode_duration_seconds_count", "orc_vram_bytes", "orc_queue_depth 0", "orc_goroutines ", "orc_uptime_seconds"} {
		if !strings.Contains(string(body), name) {
			t.Errorf("/metrics lacks %q", name)
		}
	}
}

func TestAPIKey(t *testing.T) {
	_, hs := startServer(t, "stories", Config{APIKey: "s3cret"})
	if r, _ := http.Get(hs.URL + "/health"); r.StatusCode != http.StatusOK {
		t.Fatalf("/health without key: %d", r.StatusCode)
	}
	for _, auth := range []string{"", "Bearer wrong", "s3cret", "Bearer s3cret2"} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", hs.URL+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		r, _ := http.DefaultClient.Do(req)
		if r.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, r.StatusCode)
		}
	}
	req, _ := http.NewRequest("GET", hs.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	if r, _ := http.DefaultClient.Do(req); r.StatusCode != http.StatusOK {
		t.Errorf("right key: status %d", r.StatusCode)
	}
}

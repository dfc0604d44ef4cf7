package server

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/llama-orch/orc/runtime"
	"nhooyr.io/websocket"
)

// errorBody posts an execute request expected to be refused and returns
// its status and error body.
func errorBody(t *testing.T, base string, body any) (int, http.Header, errorEvent) {
	t.Helper()
	resp := postExecute(t, base, body)
	defer resp.Body.Close()
	var e errorEvent
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &e)
	return resp.StatusCode, resp.Header, e
}

func TestRefusalsAreSummarisedNotLoggedEach(t *testing.T) {
	logs := &logBuffer{}
	_, hs := startServer(t, "stories", Config{QueueSize: 1, Logger: logs.logger(), RefusalLogInterval: 300 * time.Millisecond})
	fillQueue(t, hs.URL)
	const refused = 50
	for i := range refused {
		if status, _, _ := errorBody(t, hs.URL, map[string]any{"job_id": "r" + string(rune('a'+i%26)) + string(rune('a'+i/26)), "prompt": "hi"}); status != http.StatusTooManyRequests {
			t.Fatalf("request %d: status %d, want 429", i, status)
		}
	}
	time.Sleep(700 * time.Millisecond) // the last summary is written
	if n := len(logs.lines("request")); n != 2 {
		t.Errorf("%d request log lines, want 2 (the admitted jobs only)", n)
	}
	summaries := logs.lines("refused")
	total := 0
	for _, l := range summaries {
		n, _ := l[codeQueueFull].(float64)
		total += int(n)
	}
	if total != refused || len(summaries) > 3 {
		t.Errorf("%d summary lines counting %d refusals, want at most 3 lines counting %d: %v", len(summaries), total, refused, summaries)
	}
}

func TestHealthSaysBusyAndDraining(t *testing.T) {
	srv, hs := startServer(t, "stories", Config{})
	health := func() (int, string) {
		resp, err := http.Get(hs.URL + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h struct{ Status string }
		json.NewDecoder(resp.Body).Decode(&h)
		return resp.StatusCode, h.Status
	}
	if code, status := health(); code != 200 || status != statusReady {
		t.Fatalf("idle: %d %q, want 200 ready", code, status)
	}
	_, running := longJob(t, hs.URL, "busy")
	if code, status := health(); code != 200 || status != statusBusy {
		t.Errorf("running a job: %d %q, want 200 busy", code, status)
	}
	sd, err := http.Post(hs.URL+"/shutdown", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	sd.Body.Close()
	// From the shutdown's answer on, health and new work agree: no work.
	if code, status := health(); code != http.StatusServiceUnavailable || status != statusDraining {
		t.Errorf("after POST /shutdown: %d %q, want 503 draining", code, status)
	}
	if status, _, e := errorBody(t, hs.URL, map[string]any{"job_id": "late", "prompt": "hi"}); status != http.StatusServiceUnavailable || e.Code != codeShuttingDown || !e.Retriable {
		t.Errorf("new work after POST /shutdown: %d %+v, want 503 SHUTTING_DOWN, retriable", status, e)
	}
	running.Body.Close()
	<-srv.ShutdownRequested()
}

func TestRetriableIsOneRule(t *testing.T) {
	_, hs := startServer(t, "stories", Config{QueueSize: 1})
	fillQueue(t, hs.URL)
	// Over HTTP.
	status, h, e := errorBody(t, hs.URL, map[string]any{"job_id": "over", "prompt": "hi"})
	if status != http.StatusTooManyRequests || e.Code != codeQueueFull || !e.Retriable || h.Get("Retry-After") == "" {
		t.Errorf("HTTP refusal: %d %+v Retry-After %q, want 429 QUEUE_FULL retriable with Retry-After", status, e, h.Get("Retry-After"))
	}
	if status, _, e := errorBody(t, hs.URL, map[string]any{"job_id": "bad", "prompt": ""}); status != 400 || e.Retriable {
		t.Errorf("invalid request: %d %+v, want 400 not retriable", status, e)
	}
	// Over a websocket, the same code says the same.
	ctx, conn := dialWS(t, hs.URL)
	req, _ := json.Marshal(map[string]any{"job_id": "ws-over", "prompt": "hi"})
	conn.Write(ctx, websocket.MessageText, req)
	_, msg, err := conn.Read(ctx)
	var m struct {
		Event string
		Data  errorEvent
	}
	json.Unmarshal(msg, &m)
	if err != nil || m.Event != evError || m.Data.Code != codeQueueFull || !m.Data.Retriable {
		t.Errorf("websocket refusal: %s %+v (%v), want error QUEUE_FULL retriable", m.Event, m.Data, err)
	}
	for _, code := range []string{codeQueueFull, codeShuttingDown, codeInferenceTimeout, codeVRAMOOM} {
		if !newErrorEvent(code, "").Retriable {
			t.Errorf("%s is not retriable", code)
		}
	}
	for _, code := range []string{codeInvalidRequest, codeCancelled, codeDuplicateJob, codeInternal, codeUnauthorized, codeNotFound, codeRequestTimeout} {
		if newErrorEvent(code, "").Retriable {
			t.Errorf("%s is retriable", code)
		}
	}
}

func TestRetryAfterCountsTheQueuedWork(t *testing.T) {
	s := newScheduler(8)
	s.pace = pace{prefill: time.Millisecond, decode: 100 * time.Millisecond, fill: 1}
	job := func(id string, prompt, maxTokens int) *activeJob {
		return &activeJob{job: job{id: id, prompt: make([]int32, prompt), maxTokens: maxTokens}}
	}
	// The running job (40 tokens, 4 s) began 1 s ago; three queued jobs of
	// 1000 prompt tokens (1 s) and 40 tokens (4 s) each: 3 + 15 s ahead.
	running := job("running", 0, 40)
	s.submit(running)
	<-s.queue
	s.start(running)
	s.started = time.Now().Add(-time.Second)
	for _, id := range []string{"a", "b", "c"} {
		s.submit(job(id, 1000, 40))
	}
	if got := s.retryAfter(); got != 18 {
		t.Errorf("Retry-After %d s, want 18 (the queued jobs' expected work)", got)
	}
	// Cancelled short jobs do not make the queue look short: per token the
	// pace is unchanged, and only jobs that ended count for fill.
	short := job("short", 10, 40)
	s.pace.observe(short, runtime.GenerateResult{Tokens: make([]int32, 2), PrefillDuration: 10 * time.Millisecond, DecodeDuration: 100 * time.Millisecond}, false)
	if got := s.retryAfter(); got != 18 {
		t.Errorf("after a cancelled 2-token job, Retry-After %d s, want 18", got)
	}
	// Jobs that end at half their max_tokens halve the expected decode:
	// 1 s left of the running job, 3 × (1 + 2) s queued.
	for range 100 {
		s.pace.observe(short, runtime.GenerateResult{Tokens: make([]int32, 20), DecodeDuration: 1900 * time.Millisecond}, true)
	}
	if got := s.retryAfter(); got != 10 {
		t.Errorf("with jobs using half their max_tokens, Retry-After %d s, want 10", got)
	}
}

func TestWebsocketWithoutRequestGetsErrorAndClose(t *testing.T) {
	_, hs := startServer(t, "stories", Config{Limits: Limits{ReadTimeout: 300 * time.Millisecond}})
	ctx, conn := dialWS(t, hs.URL)
	_, msg, err := conn.Read(ctx)
	if err != nil {
		t.Fatalf("no error event before the socket closed: %v", err)
	}
	var m struct {
		Event string
		Data  errorEvent
	}
	json.Unmarshal(msg, &m)
	if m.Event != evError || m.Data.Code != codeRequestTimeout {
		t.Fatalf("first message %s, want error REQUEST_TIMEOUT", msg)
	}
	if _, _, err := conn.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("after the error: %v, want a close frame with policy violation", err)
	}
}

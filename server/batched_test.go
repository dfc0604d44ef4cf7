package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llama-orch/orc/internal/soak"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching"
)

// serveBatched serves a plan on the CPU device with a batching scheduler,
// as orcrun serve --slots does: HTTPServer on the connection-capped
// listener of a loopback socket. It returns the base URL.
func serveBatched(t *testing.T, plan string, cfg Config, bc batching.Config) (*Server, string) {
	t.Helper()
	dev, tok := openCPU(t, testPlans[plan])
	b, err := batching.New(dev.(runtime.BatchDevice), bc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() }) // after the server's cleanup has drained it
	cfg.Batch = b
	srv := serveDevice(t, dev, tok, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(ln.Addr().String())
	go hs.Serve(srv.Listener(ln))
	t.Cleanup(func() { hs.Close() })
	return srv, "http://" + ln.Addr().String()
}

// batchRequests are 16 requests of prompts of different lengths: greedy,
// sampled with their own seeds and settings, with stop strings.
func batchRequests() []map[string]any {
	reqs := make([]map[string]any, 16)
	for i := range reqs {
		r := map[string]any{
			"job_id":      fmt.Sprintf("b%d", i),
			"prompt":      "Once upon a time" + strings.Repeat(" there was a little dog", i),
			"max_tokens":  20 + i,
			"temperature": 0,
		}
		switch i % 4 {
		case 1:
			r["temperature"], r["top_p"], r["seed"] = 0.8, 0.9, i
		case 2:
			r["stop"] = []string{"named", "."}
		case 3:
			r["temperature"], r["top_k"], r["repetition_penalty"], r["seed"] = 1.0, 20, 1.2, 1000+i
		}
		reqs[i] = r
	}
	return reqs
}

// outcome is what a stream said: its text and its terminal event, timing
// left out.
func outcome(evs []sseEvent) string {
	last := evs[len(evs)-1]
	delete(last.Data, "decode_time_ms")
	b, _ := json.Marshal(last.Data)
	return textOf(evs) + " | " + last.Name + " " + string(b)
}

// Sixteen requests sent at once to a worker with 16 slots (prefill chunks
// of 8 beside the running decodes) stream exactly what each streams alone
// from the sequential worker: text, stop strings, sampled tokens, end.
func TestSlotsGiveEachRequestItsStreamAlone(t *testing.T) {
	_, seqURL := startServer(t, "stories", Config{})
	reqs := batchRequests()
	alone := make([]string, len(reqs))
	for i, r := range reqs {
		alone[i] = outcome(collect(t, postExecute(t, seqURL.URL, r)))
	}
	srv, url := serveBatched(t, "stories", Config{QueueSize: 16}, batching.Config{Slots: 16, PrefillChunk: 8})
	var most atomic.Int32
	done := make(chan struct{})
	go func() { // how many ran at once, for the log
		for {
			select {
			case <-done:
				return
			default:
			}
			most.Store(max(most.Load(), int32(srv.sched.inUse())))
			time.Sleep(time.Millisecond)
		}
	}()
	got := make([]string, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = outcome(collect(t, postExecute(t, url, r)))
		}()
	}
	wg.Wait()
	close(done)
	t.Logf("at most %d requests ran at once", most.Load())
	for i := range reqs {
		if got[i] != alone[i] {
			t.Errorf("request %d:\n batched %s\n alone   %s", i, got[i], alone[i])
		}
	}
}

// A thousand requests from 8 clients, 200 cancelled and 200 dropped
// mid-stream, each end with exactly one terminal event, and leave every
// KV block as free as before.
func TestBatchedSoakGivesEveryBlockBack(t *testing.T) {
	_, url := serveBatched(t, "stories", Config{QueueSize: 8}, batching.Config{Slots: 4, PrefillChunk: 16, BlockTokens: 4})
	rep, err := soak.Run(context.Background(), soak.Options{
		URL: url, Requests: 1000, Cancel: 200, Disconnect: 200, Clients: 8, MaxTokens: 8,
		Prompt: "Once upon a time", Seed: 3, RequestTimeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	rep.WriteText(&text)
	t.Log("\n" + text.String())
	if rep.Violations != 0 {
		t.Errorf("%d violations: %v", rep.Violations, rep.ViolationNotes)
	}
	if rep.Requests != 1000 {
		t.Errorf("%d requests sent, want 1000", rep.Requests)
	}
	b, a := rep.Before.KVBlocks, rep.After.KVBlocks
	if b == nil || a["used"] != 0 || a["free"] != b["free"] {
		t.Errorf("KV blocks before %v, after %v: want none used and as many free", b, a)
	}
	if rep.After.Goroutines > rep.Before.Goroutines+2 {
		t.Errorf("goroutines %d after the run, %d before", rep.After.Goroutines, rep.Before.Goroutines)
	}
}

// A request whose prompt and max_tokens need more KV blocks than the whole
// pool holds is refused before it is queued: 503 KV_CACHE_FULL, retriable
// (another worker may hold it), with Retry-After; in OpenAI's shape on the
// OpenAI routes. One that fits runs.
func TestRequestLargerThanTheKVPoolIsRefused(t *testing.T) {
	perBlock := int64(16 * 5 * 2 * 32 * 4) // stories260k: 16 tokens of 5 layers' k and v, 4 kv heads of 8, float32
	_, url := serveBatched(t, "stories", Config{}, batching.Config{Slots: 2, PrefillChunk: 16, KVBytes: 2 * perBlock})
	resp := postExecute(t, url, map[string]any{"job_id": "big", "prompt": "Once upon a time", "max_tokens": 100})
	var body struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retriable bool   `json:"retriable"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || body.Code != codeKVCacheFull || !body.Retriable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body.Message, "--kv-bytes") {
		t.Errorf("HTTP %d %+v, Retry-After %q: want 503 KV_CACHE_FULL, retriable, naming --kv-bytes", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"model":"x","prompt":"Once upon a time","max_tokens":100}`))
	if err != nil {
		t.Fatal(err)
	}
	var oai struct {
		Error openAIError `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&oai)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || oai.Error.Code != "kv_cache_full" || oai.Error.Type != "server_error" {
		t.Errorf("OpenAI route: HTTP %d %+v", resp.StatusCode, oai.Error)
	}
	evs := collect(t, postExecute(t, url, map[string]any{"job_id": "small", "prompt": "Once upon a time", "max_tokens": 20}))
	if evs[len(evs)-1].Name != evEnd {
		t.Errorf("a request that fits ended with %v", evs[len(evs)-1])
	}
}

// GET /health and /metrics report the slots, the KV blocks and the prefix
// cache: a prompt sent twice is found in the cache the second time.
func TestBatchedHealthAndMetrics(t *testing.T) {
	_, url := serveBatched(t, "stories", Config{}, batching.Config{Slots: 4, PrefillChunk: 16, BlockTokens: 4})
	prompt := "Once upon a time there was a little dog named Max"
	for i := range 2 {
		collect(t, postExecute(t, url, map[string]any{"job_id": fmt.Sprint(i), "prompt": prompt, "max_tokens": 4, "temperature": 0}))
	}
	// The end event comes before the job leaves its slot: wait for it.
	var h map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		resp, err := http.Get(url + "/health")
		if err != nil {
			t.Fatal(err)
		}
		h = nil
		json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if h["status"] != statusBusy || time.Now().After(deadline) {
			break
		}
	}
	if h["slots"] != 4.0 || h["slots_in_use"] != 0.0 || h["status"] != statusReady {
		t.Errorf("health %v: want slots 4, none in use, ready", h)
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 1<<16)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	m := sb.String()
	for _, want := range []string{"orc_slots 4\n", "orc_slots_in_use 0\n", "vllm:num_requests_running 0\n", "vllm:kv_cache_usage_perc 0\n", `orc_kv_blocks{state="used"} 0`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	var hits, queries int
	for _, line := range strings.Split(m, "\n") {
		fmt.Sscanf(line, "vllm:prefix_cache_hits %d", &hits)
		fmt.Sscanf(line, "vllm:prefix_cache_queries %d", &queries)
	}
	if hits == 0 || queries < 2*hits {
		t.Errorf("prefix cache: %d hits of %d queried tokens; want the second prompt's whole blocks found", hits, queries)
	}
}

package orchestrator

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/llama-orch/orc/internal/soak"
	"github.com/llama-orch/orc/orchestrator/loadgen"
)

// Two CPU workers behind orcd: the same request twice with the same seed
// gives the same tokens, wherever it is placed.
func TestSameSeedSameTokensAcrossWorkers(t *testing.T) {
	d := system(t)
	req := map[string]any{"model": storiesModel, "prompt": "Once upon a time", "max_tokens": 24, "seed": 11, "temperature": 0.8}
	var texts []string
	workers := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 { // concurrently, so both workers serve
		wg.Add(1)
		go func() {
			defer wg.Done()
			evs := stream(t, d, submit(t, d, req))
			if last := checkFraming(t, evs); last.Name != "end" {
				t.Errorf("stream ended %v", last.Data)
			}
			mu.Lock()
			defer mu.Unlock()
			texts = append(texts, tokensOf(evs))
			for _, e := range evs {
				if e.Name == "metrics" {
					workers[e.Data["worker_id"].(string)] = true
				}
			}
		}()
	}
	wg.Wait()
	for _, s := range texts[1:] {
		if s != texts[0] || s == "" {
			t.Fatalf("same seed, different tokens: %q vs %q", texts[0], s)
		}
	}
	if len(workers) != 2 {
		t.Fatalf("4 concurrent tasks ran on workers %v; want both", workers)
	}
}

// OC-CTRL-2010: admission checks come before the queue: fields, the
// model's limits, the model itself, a ready pool.
func TestOCCTRL2010AdmissionChecks(t *testing.T) {
	d := system(t)
	for _, c := range []struct {
		req    map[string]any
		status int
		code   string
	}{
		{map[string]any{"model": storiesModel, "prompt": ""}, 400, CodeInvalidParams},
		{map[string]any{"model": storiesModel, "prompt": "hi", "temperature": 3}, 400, CodeInvalidParams},
		{map[string]any{"model": storiesModel, "prompt": "hi", "max_tokens": 512}, 400, CodeInvalidParams}, // ctx_max 512
		{map[string]any{"model": storiesModel, "prompt": "hi", "max_tokens": 4096}, 400, CodeInvalidParams},
		{map[string]any{"model": "no-such-model", "prompt": "hi"}, 400, CodeInvalidParams},
		{map[string]any{"prompt": "hi"}, 400, CodeInvalidParams}, // two models served: model is required
		{map[string]any{"model": storiesModel, "prompt": "hi", "bogus": 1}, 400, CodeInvalidParams},
	} {
		resp, m := call(t, "POST", d.url+"/v1/tasks", c.req)
		if resp.StatusCode != c.status || m["code"] != c.code || m["message"] == "" {
			t.Errorf("%v: %d %v; want %d %s", c.req, resp.StatusCode, m, c.status, c.code)
		}
	}
	d.o.mu.Lock()
	queued := len(d.o.queue)
	d.o.mu.Unlock()
	if queued != 0 {
		t.Fatalf("refused tasks were queued: %d", queued)
	}
}

// OC-CTRL-2011: a full queue answers 429 with Retry-After, X-Backoff-Ms
// and a body with policy_label, retriable and retry_after_ms.
func TestOCCTRL2011QueueFull429(t *testing.T) {
	shared := system(t)
	d := startOrcd(t, Config{QueueCapacity: 2, WorkerSlots: 1})
	mirrorPool(t, shared, d, "stories", 1)
	var ids []string
	var resp *http.Response
	var body map[string]any
	for i := 0; i < 10; i++ {
		resp, body = call(t, "POST", d.url+"/v1/tasks", map[string]any{"prompt": "Once upon a time", "max_tokens": 300})
		if resp.StatusCode != http.StatusAccepted {
			break
		}
		ids = append(ids, body["task_id"].(string))
	}
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("10 tasks on 1 slot + 2 queued: last answer %d %v", resp.StatusCode, body)
	}
	ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	backoff, _ := strconv.Atoi(resp.Header.Get("X-Backoff-Ms"))
	if ra < 1 || backoff < 1 || body["policy_label"] != "queue_full.reject" || body["retriable"] != true ||
		body["retry_after_ms"].(float64) != float64(backoff) || body["code"] != CodeAdmissionReject {
		t.Fatalf("429: Retry-After %q X-Backoff-Ms %q body %v", resp.Header.Get("Retry-After"), resp.Header.Get("X-Backoff-Ms"), body)
	}
	if len(ids) != 3 {
		t.Fatalf("admitted %d tasks before the 429; want 1 placed + 2 queued", len(ids))
	}
	for _, id := range ids {
		call(t, "POST", d.url+"/v1/tasks/"+id+"/cancel", nil)
	}
}

// With the drop-lru policy a full queue admits the new task and ends the
// oldest queued one with QUEUE_FULL_DROP_LRU.
func TestQueueDropLRU(t *testing.T) {
	shared := system(t)
	d := startOrcd(t, Config{QueueCapacity: 1, WorkerSlots: 1, QueuePolicy: PolicyDropLRU})
	mirrorPool(t, shared, d, "stories", 1)
	running := submit(t, d, map[string]any{"prompt": "Once upon a time", "max_tokens": 300})
	oldest := submit(t, d, map[string]any{"prompt": "Once upon a time", "max_tokens": 8})
	newest := submit(t, d, map[string]any{"prompt": "Once upon a time", "max_tokens": 8})
	last := checkFraming(t, stream(t, d, oldest))
	if last.Name != "error" || last.Data["code"] != CodeQueueFullDropLRU || last.Data["retriable"] != true {
		t.Fatalf("dropped task ended %s %v", last.Name, last.Data)
	}
	call(t, "POST", d.url+"/v1/tasks/"+running+"/cancel", nil)
	if last := checkFraming(t, stream(t, d, newest)); last.Name != "end" {
		t.Fatalf("newest task ended %s %v", last.Name, last.Data)
	}
}

// mirrorPool registers, on orcd d, n workers of the shared system's pool
// id, as their pool manager would: a test-sized orchestrator in front of
// real workers.
func mirrorPool(t *testing.T, from, d *orcd, id string, n int) {
	t.Helper()
	reg := from.o.registration(id)
	reg.Workers = reg.Workers[:n]
	reg.ControlURL = ""
	resp, m := call(t, "PUT", d.url+"/v2/internal/pools/"+id, reg, "Authorization", "Bearer "+poolToken)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("register: %d %v", resp.StatusCode, m)
	}
}

// OC-CTRL-2012: 1,000 cancels at random points (before the stream is
// read, while queued, after some tokens, after the end): once a cancel is
// answered no token is added; the stream holds exactly the tokens the
// cancel reported and ends with error CANCELLED, or had already ended.
func TestOCCTRL2012CancelRaceFree(t *testing.T) {
	d := system(t)
	const tasks, clients, maxTokens = 1000, 8, 32
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for range tasks / clients {
				outcome := cancelAtRandom(t, d, rng, maxTokens)
				mu.Lock()
				counts[outcome]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("cancel outcomes: %v", counts)
	if counts["cancelled"] < tasks/2 {
		t.Fatalf("only %d of %d cancels hit a live task: %v", counts["cancelled"], tasks, counts)
	}
}

func cancelAtRandom(t *testing.T, d *orcd, rng *rand.Rand, maxTokens int) string {
	id := submit(t, d, map[string]any{"model": storiesModel, "prompt": "Once upon a time", "max_tokens": maxTokens, "seed": rng.Uint64()})
	resp, err := http.Get(d.url + "/v1/tasks/" + id + "/stream")
	if err != nil {
		t.Error(err)
		return "error"
	}
	defer resp.Body.Close()
	cancelAfter := rng.IntN(maxTokens+8) - 4 // < 0: before reading; > maxTokens: after the end
	var evs []soak.Event
	var reply map[string]any
	cancel := func() {
		_, reply = call(t, "POST", d.url+"/v1/tasks/"+id+"/cancel", nil)
	}
	if cancelAfter < 0 {
		cancel()
	}
	tokens := 0
	soak.ReadEvents(resp.Body, func(e soak.Event) bool {
		evs = append(evs, e)
		if e.Name == "token" {
			tokens++
			if tokens == cancelAfter && reply == nil {
				cancel()
			}
		}
		return true
	})
	if reply == nil {
		cancel()
	}
	last := checkFraming(t, evs)
	got := 0
	for _, e := range evs {
		if e.Name == "token" {
			got++
		}
	}
	switch reply["status"] {
	case "cancelled":
		if last.Name != "error" || last.Data["code"] != CodeCancelled || float64(got) != reply["tokens_delivered"].(float64) {
			t.Errorf("task %s: cancel reported %v tokens, stream has %d and ends %s %v", id, reply["tokens_delivered"], got, last.Name, last.Data)
		}
		return "cancelled"
	case "finished":
		if last.Name != "end" || float64(got) != reply["tokens_delivered"].(float64) {
			t.Errorf("task %s finished before the cancel: %v, stream has %d ends %s", id, reply, got, last.Name)
		}
		return "finished"
	}
	t.Errorf("cancel of %s answered %v", id, reply)
	return "error"
}

// OC-CTRL-2013: a valid pin routes to that pool only.
func TestOCCTRL2013PinRoutes(t *testing.T) {
	d := system(t)
	evs := stream(t, d, submit(t, d, map[string]any{"pool_id": "stories", "prompt": "Once upon a time", "max_tokens": 4}))
	checkFraming(t, evs)
	for _, e := range evs {
		if e.Name == "metrics" && e.Data["pool_id"] != "stories" {
			t.Fatalf("pinned to stories, ran on %v", e.Data)
		}
	}
}

// OC-CTRL-2014: an unknown pool, a pool that is not ready, or pinning
// disabled refuse the task with a typed error and never fall back.
func TestOCCTRL2014PinNeverFallsBack(t *testing.T) {
	shared := system(t)
	resp, m := call(t, "POST", shared.url+"/v1/tasks", map[string]any{"pool_id": "nope", "prompt": "hi"})
	if resp.StatusCode != 400 || m["code"] != CodeInvalidParams {
		t.Fatalf("unknown pool: %d %v", resp.StatusCode, m)
	}
	d := startOrcd(t, Config{})
	mirrorPool(t, shared, d, "stories", 1)
	call(t, "POST", d.url+"/v1/pools/stories/drain", map[string]any{"deadline_ms": 0})
	resp, m = call(t, "POST", d.url+"/v1/tasks", map[string]any{"pool_id": "stories", "prompt": "hi"})
	if resp.StatusCode != 503 || m["code"] != CodePoolUnready || m["pool_id"] != "stories" || m["retriable"] != true {
		t.Fatalf("drained pool: %d %v", resp.StatusCode, m)
	}
	nopin := startOrcd(t, Config{DisablePinning: true})
	mirrorPool(t, shared, nopin, "stories", 1)
	resp, m = call(t, "POST", nopin.url+"/v1/tasks", map[string]any{"pool_id": "stories", "prompt": "hi"})
	if resp.StatusCode != 400 || m["code"] != CodeInvalidParams {
		t.Fatalf("pinning disabled: %d %v", resp.StatusCode, m)
	}
}

// OC-CTRL-2020, 2021, 2022, 2027: the events, started's fields, JSON
// payloads, per-stream order.
func TestOCCTRL2020StreamEvents(t *testing.T) {
	d := system(t)
	evs := stream(t, d, submit(t, d, map[string]any{"model": storiesModel, "prompt": "Once upon a time", "max_tokens": 70}))
	last := checkFraming(t, evs)
	seen := map[string]int{}
	for _, e := range evs {
		seen[e.Name]++
		if _, bad := e.Data["unparsed"]; bad {
			t.Fatalf("event %s: data is not JSON: %v", e.Name, e.Data)
		}
	}
	if seen["token"] != 70 || seen["metrics"] < 2 || last.Name != "end" || last.Data["tokens_out"].(float64) != 70 {
		t.Fatalf("events %v, end %v", seen, last.Data)
	}
	for _, f := range []string{"decode_time_ms", "decode_ms"} {
		if _, ok := last.Data[f]; !ok {
			t.Fatalf("end lacks %s: %v", f, last.Data)
		}
	}
}

func TestOCCTRL2021StartedFields(t *testing.T) {
	d := system(t)
	evs := stream(t, d, submit(t, d, map[string]any{"model": storiesModel, "prompt": "Once upon a time", "max_tokens": 2}))
	s := evs[0].Data
	if _, ok := s["queue_position"].(float64); !ok {
		t.Fatalf("started %v: no queue_position", s)
	}
	if _, ok := s["predicted_start_ms"].(float64); !ok {
		t.Fatalf("started %v: no predicted_start_ms", s)
	}
}

func TestOCCTRL2022PayloadsJSONOrdered(t *testing.T) {
	TestOCCTRL2020StreamEvents(t)
	TestSameSeedSameTokensAcrossWorkers(t) // checkFraming on concurrent streams: order is per stream
}

func TestOCCTRL2027EventOrder(t *testing.T) {
	d := system(t)
	for range 3 {
		checkFraming(t, stream(t, d, submit(t, d, map[string]any{"model": storiesModel, "prompt": "Once", "max_tokens": 130})))
	}
}

// OC-CTRL-2023: metrics frames carry queue_depth, on_time_probability and
// kv_warmth.
func TestOCCTRL2023MetricsFrames(t *testing.T) {
	d := system(t)
	evs := stream(t, d, submit(t, d, map[string]any{"model": storiesModel, "prompt": "Once", "max_tokens": 4}))
	for _, e := range evs {
		if e.Name != "metrics" {
			continue
		}
		_, q := e.Data["queue_depth"].(float64)
		p, ok := e.Data["on_time_probability"].(float64)
		_, kv := e.Data["kv_warmth"].(bool)
		if !q || !ok || p < 0 || p > 1 || !kv {
			t.Fatalf("metrics frame %v", e.Data)
		}
		return
	}
	t.Fatalf("no metrics frame in %v", names(evs))
}

// OC-CTRL-2068: per-session budgets are enforced at admission and shown in
// metrics frames; the session can be read and deleted; its tasks stick to
// one worker.
func TestOCCTRL2068SessionBudgets(t *testing.T) {
	shared := system(t)
	d := startOrcd(t, Config{SessionTokenBudget: 20})
	mirrorPool(t, shared, d, "stories", 2)
	task := map[string]any{"prompt": "Once upon a time", "max_tokens": 8, "session_id": "s-1"}
	var workers []string
	for range 2 {
		evs := stream(t, d, submit(t, d, task))
		checkFraming(t, evs)
		for _, e := range evs {
			if e.Name == "metrics" {
				b := e.Data["budget"].(map[string]any)
				if _, ok := b["tokens_remaining"]; !ok {
					t.Fatalf("metrics frame without the budget: %v", e.Data)
				}
				workers = append(workers, e.Data["worker_id"].(string))
			}
		}
	}
	if workers[0] != workers[len(workers)-1] {
		t.Fatalf("session moved between workers: %v", workers)
	}
	resp, m := call(t, "POST", d.url+"/v1/tasks", task)
	if resp.StatusCode != 429 || m["code"] != CodeAdmissionReject || m["policy_label"] != "session.token_budget" || m["retriable"] != false {
		t.Fatalf("third task of 8 over a budget of 20: %d %v", resp.StatusCode, m)
	}
	_, s := call(t, "GET", d.url+"/v1/sessions/s-1", nil)
	if b := s["budget"].(map[string]any); b["tokens_used"].(float64) != 16 || b["tokens_remaining"].(float64) != 4 || s["tasks"].(float64) != 2 {
		t.Fatalf("session %v", s)
	}
	if resp, _ := call(t, "DELETE", d.url+"/v1/sessions/s-1", nil); resp.StatusCode != 204 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if resp, _ := call(t, "GET", d.url+"/v1/sessions/s-1", nil); resp.StatusCode != 404 {
		t.Fatalf("deleted session: %d", resp.StatusCode)
	}
}

// OC-CTRL-2063: output_mode is a hint: unknown values are ignored, known
// ones tag the job's artifact, and the tokens are the same.
func TestOCCTRL2063OutputModeHint(t *testing.T) {
	d := system(t)
	base := map[string]any{"model": storiesModel, "prompt": "Once upon a time", "max_tokens": 8, "seed": 3}
	var texts []string
	for _, mode := range []string{"", "json", "frobnicate"} {
		req := map[string]any{}
		for k, v := range base {
			req[k] = v
		}
		if mode != "" {
			req["output_mode"] = mode
		}
		id := submit(t, d, req)
		texts = append(texts, tokensOf(stream(t, d, id)))
		art := jobArtifact(t, d, id)
		tagged := false
		for _, tag := range art["tags"].([]any) {
			tagged = tagged || tag == "output_mode:json"
		}
		if tagged != (mode == "json") {
			t.Fatalf("output_mode %q: tags %v", mode, art["tags"])
		}
	}
	if texts[0] != texts[1] || texts[1] != texts[2] {
		t.Fatalf("output_mode changed the tokens: %q", texts)
	}
}

// jobArtifact waits for a finished task's artifact and returns it.
func jobArtifact(t *testing.T, d *orcd, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		_, task := call(t, "GET", d.url+"/v1/tasks/"+id, nil)
		if a, ok := task["artifact_id"].(string); ok {
			resp, art := call(t, "GET", d.url+"/v1/artifacts/"+a, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("artifact %s: %d", a, resp.StatusCode)
			}
			return art
		}
	}
	t.Fatalf("task %s: no artifact within 5 s", id)
	return nil
}

// orcd bench's load generator against the two CPU workers behind orcd and
// one of them directly: every request completes and is measured.
func TestLoadgenMeasures(t *testing.T) {
	d := system(t)
	reg := d.o.registration("stories")
	req := loadgen.Request{Prompt: "Once upon a time", MaxTokens: 16, Seed: 1}
	orcdT := loadgen.Target{URL: d.url, Orcd: true, Model: storiesModel}
	direct := loadgen.Target{URL: reg.Workers[0].URI, APIKey: poolToken}
	r := loadgen.Run(context.Background(), orcdT, req, 4, 8)
	if r.Failed != 0 || r.Tokens != 8*16 || r.TTFTMedianMs <= 0 || r.GapMedianUs <= 0 {
		t.Fatalf("through orcd: %+v", r)
	}
	a, b := loadgen.Latency(context.Background(), orcdT, direct, req, 2)
	if a.Failed+b.Failed != 0 || a.Tokens != 32 || b.Tokens != 32 {
		t.Fatalf("latency runs: %+v %+v", a, b)
	}
}

package orchestrator

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/internal/soak"
	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// failedStream runs a task that fails after its stream started: its pool
// is drained with a deadline of 1 ms after the first token.
func failedStream(t *testing.T) (*http.Response, []soak.Event) {
	t.Helper()
	sys := system(t)
	d := startOrcd(t, Config{})
	mirrorPool(t, sys, d, "stories", 1)
	id := submit(t, d, map[string]any{"prompt": "Once upon a time", "max_tokens": 300})
	resp, err := http.Get(d.url + "/v1/tasks/" + id + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []soak.Event
	soak.ReadEvents(resp.Body, func(e soak.Event) bool {
		evs = append(evs, e)
		if e.Name == "token" && e.Data["i"].(float64) == 0 {
			call(t, "POST", d.url+"/v1/pools/stories/drain", map[string]any{"deadline_ms": 1})
		}
		return true
	})
	return resp, evs
}

// OC-CTRL-2028: a failure after the stream started is an error event with
// code, retriable, message (and retry_after_ms where known).
func TestOCCTRL2028StreamingFailureEvent(t *testing.T) {
	_, evs := failedStream(t)
	last := checkFraming(t, evs)
	if last.Name != "error" {
		t.Fatalf("stream ended %s %v", last.Name, last.Data)
	}
	_, code := last.Data["code"].(string)
	_, retriable := last.Data["retriable"].(bool)
	_, msg := last.Data["message"].(string)
	if !code || !retriable || !msg {
		t.Fatalf("error event %v", last.Data)
	}
}

// OC-CTRL-2029: nothing follows the error event; the stream ends.
func TestOCCTRL2029NothingAfterError(t *testing.T) {
	_, evs := failedStream(t)
	i := slices.IndexFunc(evs, func(e soak.Event) bool { return e.Name == "error" })
	if i < 0 || i != len(evs)-1 {
		t.Fatalf("events %v: error not last", names(evs))
	}
}

// OC-CTRL-2034: errors before the stream are HTTP statuses; an established
// stream stays 200 and carries its error as an event.
func TestOCCTRL2034PreStreamStatusInStreamEvent(t *testing.T) {
	resp, evs := failedStream(t)
	if resp.StatusCode != 200 || evs[len(evs)-1].Name != "error" {
		t.Fatalf("failed stream: %d %v", resp.StatusCode, names(evs))
	}
	d := system(t)
	r, m := call(t, "POST", d.url+"/v1/tasks", map[string]any{"model": storiesModel, "prompt": "hi", "top_p": 7})
	if r.StatusCode != 400 || m["code"] != CodeInvalidParams || !strings.Contains(m["message"].(string), "top_p") {
		t.Fatalf("pre-stream error: %d %v", r.StatusCode, m)
	}
	if r, _ := call(t, "GET", d.url+"/v1/tasks/nope/stream", nil); r.StatusCode != 404 {
		t.Fatalf("stream of an unknown task: %d", r.StatusCode)
	}
}

// stableCodes is OC-CTRL-2030's taxonomy and orcd's additions.
var stableCodes = []string{CodeAdmissionReject, CodeQueueFullDropLRU, CodeInvalidParams, CodePoolUnready, CodePoolUnavailable,
	CodeReplicaExhausted, CodeDecodeTimeout, CodeWorkerReset, CodeInternal, CodeCancelled, CodeUnauthorized, CodeNotFound}

// OC-CTRL-2030: every error has a stable code.
func TestOCCTRL2030StableCodes(t *testing.T) {
	d := system(t)
	for _, req := range []map[string]any{
		{"prompt": ""}, {"model": "x", "prompt": "hi"}, {"pool_id": "x", "prompt": "hi"},
	} {
		_, m := call(t, "POST", d.url+"/v1/tasks", req)
		if !slices.Contains(stableCodes, m["code"].(string)) {
			t.Fatalf("%v: code %v", req, m["code"])
		}
	}
	_, evs := failedStream(t)
	if c := evs[len(evs)-1].Data["code"].(string); !slices.Contains(stableCodes, c) {
		t.Fatalf("stream error code %q", c)
	}
}

// OC-CTRL-2031: pool errors name the engine and the pool.
func TestOCCTRL2031EngineAndPool(t *testing.T) {
	_, evs := failedStream(t)
	e := evs[len(evs)-1].Data
	if e["engine"] != Engine || e["pool_id"] != "stories" {
		t.Fatalf("error event %v", e)
	}
}

// OC-CTRL-2032: back-pressure and transient errors carry retriable and
// retry_after_ms, in bodies and in error events alike.
func TestOCCTRL2032AdvisoryFields(t *testing.T) {
	_, evs := failedStream(t)
	e := evs[len(evs)-1].Data
	if e["retriable"] != true || e["retry_after_ms"].(float64) <= 0 {
		t.Fatalf("error event %v", e)
	}
	sys := system(t)
	d := startOrcd(t, Config{})
	mirrorPool(t, sys, d, "stories", 1)
	call(t, "POST", d.url+"/v1/pools/stories/drain", map[string]any{"deadline_ms": 0})
	resp, m := call(t, "POST", d.url+"/v1/tasks", map[string]any{"pool_id": "stories", "prompt": "hi"})
	if resp.StatusCode != 503 || m["retriable"] != true || m["retry_after_ms"].(float64) <= 0 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("POOL_UNREADY: %d %v", resp.StatusCode, m)
	}
}

// OC-CTRL-2050: admission logs and started carry queue_position and
// predicted_start_ms.
func TestOCCTRL2050AdmissionLogs(t *testing.T) {
	d := system(t)
	id := submit(t, d, map[string]any{"model": storiesModel, "prompt": "Once", "max_tokens": 2})
	stream(t, d, id)
	for _, line := range strings.Split(d.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"admitted"`) && strings.Contains(line, id) {
			if !strings.Contains(line, `"queue_position":`) || !strings.Contains(line, `"predicted_start_ms":`) {
				t.Fatalf("admission log %s", line)
			}
			return
		}
	}
	t.Fatalf("no admission log line for %s", id)
}

// OC-CTRL-2051: the metrics hold queue depth, rejects and drops by policy,
// latency histograms and errors by code, and per-pool readiness.
func TestOCCTRL2051Metrics(t *testing.T) {
	d := system(t)
	call(t, "POST", d.url+"/v1/tasks", map[string]any{"prompt": ""})
	id := submit(t, d, map[string]any{"model": storiesModel, "prompt": "Once", "max_tokens": 50})
	call(t, "POST", d.url+"/v1/tasks/"+id+"/cancel", nil)
	stream(t, d, submit(t, d, map[string]any{"model": storiesModel, "prompt": "Once", "max_tokens": 3}))
	resp, err := http.Get(d.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		"orcd_queue_depth ", "orcd_admissions_total ", `orcd_rejects_total{policy="INVALID_PARAMS"} `,
		"# TYPE orcd_drops_total counter", `orcd_errors_total{code="CANCELLED"} `,
		"orcd_queue_wait_seconds_bucket", "orcd_time_to_first_token_seconds_count", "orcd_inter_token_seconds_sum",
		"orcd_task_duration_seconds_bucket", `orcd_pool_ready{pool_id="stories"} 1`, "orcd_tasks_completed_total ",
	} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("/metrics lacks %q:\n%s", want, b)
		}
	}
}

// A task whose every placement fails before a worker starts it (workers
// that do not answer) ends REPLICA_EXHAUSTED, retriable, after
// MaxPlacements; the dead workers leave placement.
func TestReplicaExhausted(t *testing.T) {
	d := startOrcd(t, Config{MaxPlacements: 3})
	reg := poolapi.Pool{ID: "dead", Engine: Engine, EngineVersion: EngineVersion, Model: "m", ModelRef: "/p", CtxMax: 512, MaxTokensOut: 64}
	for i := range 3 {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		uri := "http://" + ln.Addr().String()
		ln.Close() // nothing listens there now
		reg.Workers = append(reg.Workers, poolapi.Worker{ID: fmt.Sprint("w", i), URI: uri, Status: poolapi.StatusReady, Device: "cpu", PID: 1})
	}
	if resp, m := call(t, "PUT", d.url+"/v2/internal/pools/dead", reg, "Authorization", "Bearer "+poolToken); resp.StatusCode != 204 {
		t.Fatalf("register: %d %v", resp.StatusCode, m)
	}
	evs := stream(t, d, submit(t, d, map[string]any{"prompt": "hi", "max_tokens": 4}))
	last := checkFraming(t, evs)
	if last.Name != "error" || last.Data["code"] != CodeReplicaExhausted || last.Data["retriable"] != true {
		t.Fatalf("stream ended %s %v", last.Name, last.Data)
	}
	_, h := call(t, "GET", d.url+"/v1/pools/dead/health", nil)
	if h["ready"] != false {
		t.Fatalf("pool of dead workers still ready: %v", h)
	}
}

// A job past the worker's inference timeout ends DECODE_TIMEOUT,
// retriable.
func TestDecodeTimeout(t *testing.T) {
	d := startOrcd(t, Config{})
	startPool(t, d, "slow", plans["stories"], 1, "--inference-timeout", "30ms")
	last := checkFraming(t, stream(t, d, submit(t, d, map[string]any{"prompt": "Once upon a time", "max_tokens": 400})))
	if last.Name != "error" || last.Data["code"] != CodeDecodeTimeout || last.Data["retriable"] != true || last.Data["pool_id"] != "slow" {
		t.Fatalf("stream ended %s %v", last.Name, last.Data)
	}
}

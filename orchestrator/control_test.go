package orchestrator

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llama-orch/orc/internal/soak"
)

// OC-CTRL-2001: pool health has liveness, readiness, draining and a
// metrics snapshot.
func TestOCCTRL2001PoolHealth(t *testing.T) {
	d := system(t)
	resp, h := call(t, "GET", d.url+"/v1/pools/stories/health", nil)
	m, _ := h["metrics"].(map[string]any)
	if resp.StatusCode != 200 || h["live"] != true || h["ready"] != true || h["draining"] != false || m == nil {
		t.Fatalf("health: %d %v", resp.StatusCode, h)
	}
	for _, f := range []string{"queue_depth", "tasks_placed", "tasks_done", "mean_job_ms"} {
		if _, ok := m[f]; !ok {
			t.Fatalf("metrics snapshot lacks %s: %v", f, m)
		}
	}
	if ws := h["workers"].([]any); len(ws) != 2 || ws[0].(map[string]any)["status"] != "ready" {
		t.Fatalf("workers %v", h["workers"])
	}
	if resp, _ := call(t, "GET", d.url+"/v1/pools/nope/health", nil); resp.StatusCode != 404 {
		t.Fatalf("unknown pool: %d", resp.StatusCode)
	}
}

// OC-CTRL-2002: drain takes deadline_ms and starts draining: no new tasks;
// a task that finishes within the deadline ends normally, one still running
// at the deadline ends with POOL_UNAVAILABLE, retriable.
func TestOCCTRL2002DrainWithDeadline(t *testing.T) {
	shared := system(t)
	for _, c := range []struct {
		deadlineMs int
		want       string
	}{{10000, "end"}, {1, CodePoolUnavailable}} {
		d := startOrcd(t, Config{})
		mirrorPool(t, shared, d, "stories", 1)
		id := submit(t, d, map[string]any{"prompt": "Once upon a time", "max_tokens": 300})
		resp, err := http.Get(d.url + "/v1/tasks/" + id + "/stream")
		if err != nil {
			t.Fatal(err)
		}
		var evs []soak.Event
		soak.ReadEvents(resp.Body, func(e soak.Event) bool {
			evs = append(evs, e)
			if e.Name == "token" && e.Data["i"].(float64) == 0 {
				r, m := call(t, "POST", d.url+"/v1/pools/stories/drain", map[string]any{"deadline_ms": c.deadlineMs})
				if r.StatusCode != 202 || m["draining"] != true {
					t.Errorf("drain: %d %v", r.StatusCode, m)
				}
				_, h := call(t, "GET", d.url+"/v1/pools/stories/health", nil)
				if h["draining"] != true || h["ready"] != false {
					t.Errorf("draining pool's health %v", h)
				}
				if r, m := call(t, "POST", d.url+"/v1/tasks", map[string]any{"prompt": "hi"}); r.StatusCode != 503 {
					t.Errorf("task during drain: %d %v", r.StatusCode, m)
				}
			}
			return true
		})
		resp.Body.Close()
		last := checkFraming(t, evs)
		code, _ := last.Data["code"].(string)
		if last.Name != c.want && code != c.want {
			t.Fatalf("deadline %d ms: stream ended %s %v; want %s", c.deadlineMs, last.Name, last.Data, c.want)
		}
		if code == CodePoolUnavailable && last.Data["retriable"] != true {
			t.Fatalf("cut task not retriable: %v", last.Data)
		}
	}
	if r, _ := call(t, "POST", shared.url+"/v1/pools/stories/drain", map[string]any{}); r.StatusCode != 400 {
		t.Fatalf("drain without deadline_ms: %d", r.StatusCode)
	}
}

// OC-CTRL-2003: reload switches atomically or rolls back. A tampered plan
// (its weights no longer match the manifest's hashes) cannot start, so the
// reload fails, is rolled back, and the old plan still serves; a good plan
// switches, and the pool serves it.
func TestOCCTRL2003ReloadRollsBack(t *testing.T) {
	d := startOrcd(t, Config{})
	startPool(t, d, "r", plans["stories"], 1)
	before := stream(t, d, submit(t, d, map[string]any{"prompt": "Once upon a time", "max_tokens": 8, "seed": 1}))
	resp, m := call(t, "POST", d.url+"/v1/pools/r/reload", map[string]any{"model_ref": plans["tampered"]})
	if resp.StatusCode != 409 || m["rolled_back"] != true || m["model_ref"] != plans["stories"] || !strings.Contains(m["message"].(string), "fail their hash") {
		t.Fatalf("reload to a tampered plan: %d %v", resp.StatusCode, m)
	}
	after := stream(t, d, submit(t, d, map[string]any{"prompt": "Once upon a time", "max_tokens": 8, "seed": 1}))
	if checkFraming(t, after).Name != "end" || tokensOf(after) != tokensOf(before) {
		t.Fatalf("after the rollback: %v", names(after))
	}
	_, h := call(t, "GET", d.url+"/v1/pools/r/health", nil)
	if h["model_ref"] != plans["stories"] || h["ready"] != true {
		t.Fatalf("after the rollback: %v", h)
	}
	// A good plan: a copy of the same one at another path.
	copyRef := filepath.Join(t.TempDir(), "copy.plan")
	if out, err := exec.Command("cp", "-r", plans["stories"], copyRef).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	resp, m = call(t, "POST", d.url+"/v1/pools/r/reload", map[string]any{"model_ref": copyRef})
	if resp.StatusCode != 200 || m["switched"] != true {
		t.Fatalf("reload to a good plan: %d %v", resp.StatusCode, m)
	}
	_, h = call(t, "GET", d.url+"/v1/pools/r/health", nil)
	if h["model_ref"] != copyRef {
		t.Fatalf("after the switch: %v", h)
	}
	if err := waitReady(d, "r", 1, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if ev := stream(t, d, submit(t, d, map[string]any{"prompt": "Once upon a time", "max_tokens": 8, "seed": 1})); tokensOf(ev) != tokensOf(before) {
		t.Fatalf("the new plan's worker: %q vs %q", tokensOf(ev), tokensOf(before))
	}
}

// A worker killed with SIGKILL mid-stream: its stream ends WORKER_RESET,
// retriable; orcpool restarts it; the next tasks succeed on both workers.
func TestWorkerKilledMidStream(t *testing.T) {
	d := startOrcd(t, Config{})
	startPool(t, d, "k", plans["stories"], 2)
	id := submit(t, d, map[string]any{"prompt": "Once upon a time", "max_tokens": 400})
	resp, err := http.Get(d.url + "/v1/tasks/" + id + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	var evs []soak.Event
	var victim string
	soak.ReadEvents(resp.Body, func(e soak.Event) bool {
		evs = append(evs, e)
		if e.Name == "metrics" && victim == "" {
			victim = e.Data["worker_id"].(string)
		}
		if e.Name == "token" && e.Data["i"].(float64) == 2 {
			reg := d.o.registration("k")
			for _, w := range reg.Workers {
				if w.ID == victim {
					syscall.Kill(w.PID, syscall.SIGKILL)
				}
			}
		}
		return true
	})
	resp.Body.Close()
	last := checkFraming(t, evs)
	if last.Name != "error" || last.Data["code"] != CodeWorkerReset || last.Data["retriable"] != true || last.Data["pool_id"] != "k" {
		t.Fatalf("killed worker's stream ended %s %v", last.Name, last.Data)
	}
	// orcpool restarts it: same worker id, another process.
	deadline := time.Now().Add(30 * time.Second)
	for {
		restarted := false
		for _, w := range d.o.registration("k").Workers {
			restarted = restarted || w.ID == victim && w.Restarts == 1 && w.Status == "ready"
		}
		if restarted && waitReady(d, "k", 2, time.Second) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker %s not restarted: %+v", victim, d.o.registration("k").Workers)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ids := []string{submit(t, d, map[string]any{"prompt": "Once", "max_tokens": 200}), submit(t, d, map[string]any{"prompt": "Once", "max_tokens": 200})}
	ran := map[string]bool{}
	for _, id := range ids {
		evs := stream(t, d, id)
		if last := checkFraming(t, evs); last.Name != "end" {
			t.Fatalf("task after the restart ended %v", last.Data)
		}
		for _, e := range evs {
			if e.Name == "metrics" {
				ran[e.Data["worker_id"].(string)] = true
			}
		}
	}
	if !ran[victim] || len(ran) != 2 {
		t.Fatalf("after the restart tasks ran on %v; want both workers, %s among them", ran, victim)
	}
}

// OC-CTRL-2004, 2062: GET /v1/replicasets is not served.
func TestOCCTRL2004NoReplicasets(t *testing.T) {
	d := system(t)
	if resp, _ := call(t, "GET", d.url+"/v1/replicasets", nil); resp.StatusCode != 404 {
		t.Fatalf("/v1/replicasets: %d", resp.StatusCode)
	}
}

func TestOCCTRL2062ReplicasetsRemoved(t *testing.T) { TestOCCTRL2004NoReplicasets(t) }

// OC-CTRL-2060, 2061: capabilities per pool, with the API version of the
// OpenAPI documents.
func TestOCCTRL2060Capabilities(t *testing.T) {
	d := system(t)
	_, c := call(t, "GET", d.url+"/v1/capabilities", nil)
	pools := c["pools"].([]any)
	if len(pools) != 2 {
		t.Fatalf("capabilities %v", c)
	}
	for _, p := range pools {
		p := p.(map[string]any)
		for _, f := range []string{"engine", "engine_version", "sampler_profile_version", "ctx_max", "max_tokens_out", "slots", "supported_workloads", "rate_limits", "features", "model"} {
			if _, ok := p[f]; !ok {
				t.Fatalf("pool %v lacks %s", p["pool_id"], f)
			}
		}
		if p["pool_id"] == "stories" && (p["ctx_max"].(float64) != 512 || p["slots"].(float64) != 2) {
			t.Fatalf("stories pool %v", p)
		}
	}
}

func TestOCCTRL2061APIVersion(t *testing.T) {
	d := system(t)
	_, c := call(t, "GET", d.url+"/v1/capabilities", nil)
	for _, doc := range []string{"control.yaml", "data.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "contracts", "openapi", doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "\n  version: "+c["api_version"].(string)+"\n") {
			t.Fatalf("%s: info.version is not the served api_version %v", doc, c["api_version"])
		}
	}
}

package orchestrator

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A worker serving with --slots N (orcpool --slots) is N jobs of capacity:
// its pool manager reads the slots from the worker's /health and registers
// them, orcd places N tasks on it at once (with --worker-slots 1, none
// waiting there) and counts them in the pool's capabilities.
func TestWorkerSlotsAreCapacity(t *testing.T) {
	d := startOrcd(t, Config{WorkerSlots: 1, QueueCapacity: 8})
	startPool(t, d, "batched", plans["stories"], 1, "--slots", "3")
	_, caps := call(t, "GET", d.url+"/v1/capabilities", nil)
	var slots any
	for _, p := range caps["pools"].([]any) {
		if p := p.(map[string]any); p["pool_id"] == "batched" {
			slots = p["slots"]
		}
	}
	if slots != 3.0 {
		t.Errorf("capabilities say %v slots, want 3", slots)
	}
	var ids []string
	for range 4 {
		ids = append(ids, submit(t, d, map[string]any{"pool_id": "batched", "prompt": "Once upon a time", "max_tokens": 400}))
	}
	resp, err := http.Get(d.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"orcd_tasks_placed 3\n", "orcd_queue_depth 1\n"} {
		if !strings.Contains(string(m), want) {
			t.Errorf("after 4 long tasks on a worker of 3 slots, metrics lack %q", want)
		}
	}
	for _, id := range ids {
		call(t, "POST", d.url+"/v1/tasks/"+id+"/cancel", nil)
	}
}

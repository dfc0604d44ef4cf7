package orchestrator

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/llama-orch/orc/internal/promtext"
)

// metrics are orcd's Prometheus series (OC-CTRL-2051): queue depth,
// admissions, rejects and drops by policy, latency histograms and errors
// by code, and per-pool readiness.
type metrics struct {
	o          *Orchestrator
	queueWait  *promtext.Histogram
	ttft       *promtext.Histogram
	interToken *promtext.Histogram
	total      *promtext.Histogram

	mu         sync.Mutex
	admissions uint64
	rejects    map[string]uint64 // by policy label (or code when none)
	drops      map[string]uint64 // by policy
	outcomes   map[string]uint64 // finished tasks by "end" or error code
}

func newMetrics(o *Orchestrator) *metrics {
	latency := []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	return &metrics{
		o:          o,
		queueWait:  promtext.NewHistogram(latency...),
		ttft:       promtext.NewHistogram(latency...),
		interToken: promtext.NewHistogram(0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
		total:      promtext.NewHistogram(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
		rejects:    map[string]uint64{},
		drops:      map[string]uint64{},
		outcomes:   map[string]uint64{},
	}
}

func (m *metrics) admitted() {
	m.mu.Lock()
	m.admissions++
	m.mu.Unlock()
}

func (m *metrics) refused(e *apiError) {
	label := e.PolicyLabel
	if label == "" {
		label = e.Code
	}
	m.mu.Lock()
	m.rejects[label]++
	m.mu.Unlock()
}

func (m *metrics) droppedTask(policy string) {
	m.mu.Lock()
	m.drops[policy]++
	m.mu.Unlock()
}

func (m *metrics) finished(outcome string, took time.Duration) {
	m.mu.Lock()
	m.outcomes[outcome]++
	m.mu.Unlock()
	m.total.Observe(took.Seconds())
}

// counters writes one labelled counter family in label order.
func counters(w http.ResponseWriter, name, label, help string, values map[string]uint64) {
	promtext.Header(w, name, "counter", help)
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s{%s=%q} %d\n", name, label, k, values[k])
	}
}

func (o *Orchestrator) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	m := o.metrics
	now := time.Now()
	o.mu.Lock()
	depth, running := len(o.queue), 0
	ready := map[string]bool{}
	for id, p := range o.pools {
		ready[id] = p.ready(now, o.cfg.PoolTimeout)
		running += p.inflight()
	}
	o.mu.Unlock()
	promtext.Header(w, "orcd_queue_depth", "gauge", "Tasks waiting for a worker.")
	fmt.Fprintf(w, "orcd_queue_depth %d\n", depth)
	promtext.Header(w, "orcd_tasks_placed", "gauge", "Tasks placed on workers and not finished there.")
	fmt.Fprintf(w, "orcd_tasks_placed %d\n", running)
	m.mu.Lock()
	promtext.Header(w, "orcd_admissions_total", "counter", "Tasks admitted to the queue.")
	fmt.Fprintf(w, "orcd_admissions_total %d\n", m.admissions)
	counters(w, "orcd_rejects_total", "policy", "Requests refused at admission, by policy label or error code.", m.rejects)
	counters(w, "orcd_drops_total", "policy", "Queued tasks dropped for newer ones, by policy.", m.drops)
	errs := map[string]uint64{}
	for k, v := range m.outcomes {
		if k != evEnd {
			errs[k] = v
		}
	}
	promtext.Header(w, "orcd_tasks_completed_total", "counter", "Tasks that ended with the end event.")
	fmt.Fprintf(w, "orcd_tasks_completed_total %d\n", m.outcomes[evEnd])
	counters(w, "orcd_errors_total", "code", "Tasks that ended with an error event, by code.", errs)
	m.mu.Unlock()
	m.queueWait.Write(w, "orcd_queue_wait_seconds", "Admission to the worker's start.")
	m.ttft.Write(w, "orcd_time_to_first_token_seconds", "Admission to the first token.")
	m.interToken.Write(w, "orcd_inter_token_seconds", "Gap between consecutive tokens of a task, as relayed.")
	m.total.Write(w, "orcd_task_duration_seconds", "Admission to the stream's end.")
	ids := make([]string, 0, len(ready))
	for id := range ready {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	promtext.Header(w, "orcd_pool_ready", "gauge", "1 when the pool takes tasks.")
	for _, id := range ids {
		v := 0
		if ready[id] {
			v = 1
		}
		fmt.Fprintf(w, "orcd_pool_ready{pool_id=%q} %d\n", id, v)
	}
}

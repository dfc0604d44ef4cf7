package server

import (
	"fmt"
	"io"
	goruntime "runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/llama-orch/orc/internal/promtext"
	"github.com/llama-orch/orc/runtime/batching"
)

// metrics are the server's Prometheus series, written in the text
// exposition format by hand: a handful of series needs no client library.
type metrics struct {
	mu        sync.Mutex
	requests  map[string]uint64 // by outcome
	tokens    uint64
	ttft      *promtext.Histogram
	decode    *promtext.Histogram
	started   time.Time
	vramBytes func() int64
	queue     func() int
	// load is the running jobs and the share of the context's KV positions
	// their sequences hold, for the gauges inference gateways read.
	load func() (running int, kvUsage float64)
	// slots is the jobs the worker runs at once and how many run now.
	slots func() (total, inUse int)
	// batch is the batching scheduler's state; nil when jobs run one at a
	// time.
	batch func() batching.Stats
}

// Request outcomes counted in orc_requests_total.
const (
	outcomeOK        = "ok"
	outcomeCancelled = "cancelled"
	outcomeTimeout   = "timeout"
	outcomeError     = "error"
	outcomeInvalid   = "invalid"
	outcomeRejected  = "rejected" // queue full or shutting down
	outcomeOOM       = "vram_oom"
)

func newMetrics(vram func() int64, queue func() int, load func() (int, float64)) *metrics {
	latency := []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	return &metrics{
		requests:  map[string]uint64{},
		ttft:      promtext.NewHistogram(latency...),
		decode:    promtext.NewHistogram(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
		started:   time.Now(),
		vramBytes: vram,
		queue:     queue,
		load:      load,
	}
}

func (m *metrics) request(outcome string) {
	m.mu.Lock()
	m.requests[outcome]++
	m.mu.Unlock()
}

func (m *metrics) generated(tokens int, ttft, decode time.Duration) {
	m.mu.Lock()
	m.tokens += uint64(tokens)
	if ttft > 0 {
		m.ttft.Observe(ttft.Seconds())
	}
	if tokens > 1 {
		m.decode.Observe(decode.Seconds())
	}
	m.mu.Unlock()
}

func (m *metrics) write(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintln(w, "# HELP orc_requests_total Execute and completion requests by outcome.")
	fmt.Fprintln(w, "# TYPE orc_requests_total counter")
	outcomes := []string{outcomeOK, outcomeCancelled, outcomeTimeout, outcomeError, outcomeInvalid, outcomeRejected, outcomeOOM}
	for o := range m.requests {
		if !slices.Contains(outcomes, o) {
			outcomes = append(outcomes, o)
		}
	}
	sort.Strings(outcomes)
	for _, o := range outcomes {
		fmt.Fprintf(w, "orc_requests_total{outcome=%q} %d\n", o, m.requests[o])
	}
	fmt.Fprintln(w, "# HELP orc_tokens_generated_total Tokens generated.")
	fmt.Fprintln(w, "# TYPE orc_tokens_generated_total counter")
	fmt.Fprintf(w, "orc_tokens_generated_total %d\n", m.tokens)
	m.ttft.Write(w, "orc_time_to_first_token_seconds", "Time from request start to the first generated token.")
	m.decode.Write(w, "orc_decode_duration_seconds", "Time spent decoding after the first token, per request.")
	fmt.Fprintln(w, "# HELP orc_vram_bytes Device memory held by the loaded plan and caches.")
	fmt.Fprintln(w, "# TYPE orc_vram_bytes gauge")
	fmt.Fprintf(w, "orc_vram_bytes %d\n", m.vramBytes())
	fmt.Fprintln(w, "# HELP orc_queue_depth Jobs waiting behind the running one.")
	fmt.Fprintln(w, "# TYPE orc_queue_depth gauge")
	fmt.Fprintf(w, "orc_queue_depth %d\n", m.queue())
	// The model-server gauges Kubernetes inference gateways read, in vLLM's
	// names.
	running, kv := m.load()
	promtext.Header(w, "vllm:num_requests_waiting", "gauge", "Requests waiting in the queue.")
	fmt.Fprintf(w, "vllm:num_requests_waiting %d\n", m.queue())
	promtext.Header(w, "vllm:num_requests_running", "gauge", "Requests running on the device.")
	fmt.Fprintf(w, "vllm:num_requests_running %d\n", running)
	kvHelp := "Share of the context's KV positions held by running sequences, 0 to 1."
	if m.batch != nil {
		kvHelp = "Share of the KV cache pool's blocks held by running sequences, 0 to 1."
	}
	promtext.Header(w, "vllm:kv_cache_usage_perc", "gauge", kvHelp)
	fmt.Fprintf(w, "vllm:kv_cache_usage_perc %g\n", kv)
	total, inUse := m.slots()
	promtext.Header(w, "orc_slots", "gauge", "Jobs the worker runs at once.")
	fmt.Fprintf(w, "orc_slots %d\n", total)
	promtext.Header(w, "orc_slots_in_use", "gauge", "Jobs running now.")
	fmt.Fprintf(w, "orc_slots_in_use %d\n", inUse)
	if m.batch != nil {
		m.writeBatch(w, m.batch())
	}
	fmt.Fprintln(w, "# HELP orc_goroutines Goroutines of the server process; growth across requests is a leak.")
	fmt.Fprintln(w, "# TYPE orc_goroutines gauge")
	fmt.Fprintf(w, "orc_goroutines %d\n", goruntime.NumGoroutine())
	fmt.Fprintln(w, "# HELP orc_uptime_seconds Seconds since the server started.")
	fmt.Fprintln(w, "# TYPE orc_uptime_seconds gauge")
	fmt.Fprintf(w, "orc_uptime_seconds %.3f\n", time.Since(m.started).Seconds())
}

// writeBatch writes the paged KV cache's series: blocks by state and the
// prefix cache's counters, in prompt tokens as vLLM counts them.
func (m *metrics) writeBatch(w io.Writer, st batching.Stats) {
	promtext.Header(w, "orc_kv_blocks", "gauge", "KV cache blocks by state: used (held by running sequences), cached (free, kept for prefix reuse until evicted), free (cached included).")
	fmt.Fprintf(w, "orc_kv_blocks{state=\"used\"} %d\n", st.KV.Used)
	fmt.Fprintf(w, "orc_kv_blocks{state=\"cached\"} %d\n", st.KV.Cached)
	fmt.Fprintf(w, "orc_kv_blocks{state=\"free\"} %d\n", st.KV.Free)
	promtext.Header(w, "orc_kv_cache_bytes", "gauge", "Size of the KV cache pool.")
	fmt.Fprintf(w, "orc_kv_cache_bytes %d\n", st.KVBytes)
	promtext.Header(w, "vllm:prefix_cache_queries", "counter", "Prompt tokens looked up in the prefix cache.")
	fmt.Fprintf(w, "vllm:prefix_cache_queries %d\n", st.KV.Queries)
	promtext.Header(w, "vllm:prefix_cache_hits", "counter", "Prompt tokens found in the prefix cache (their prefill skipped).")
	fmt.Fprintf(w, "vllm:prefix_cache_hits %d\n", st.KV.Hits)
}

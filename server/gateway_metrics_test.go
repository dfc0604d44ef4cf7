package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The gauges inference gateways read: waiting and running requests and KV
// usage, idle and while a job runs.
func TestGatewayGauges(t *testing.T) {
	_, hs := startServer(t, "stories", Config{})
	scrape := func() string {
		r, err := http.Get(hs.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return string(b)
	}
	idle := scrape()
	for _, want := range []string{"vllm:num_requests_waiting 0\n", "vllm:num_requests_running 0\n", "vllm:kv_cache_usage_perc 0\n"} {
		if !strings.Contains(idle, want) {
			t.Fatalf("idle /metrics lacks %q", want)
		}
	}
	resp := postExecute(t, hs.URL, map[string]any{"job_id": "gauges", "prompt": "Once upon a time", "max_tokens": 400})
	ch := make(chan sseEvent, 16)
	go readEvents(resp.Body, ch)
	for e := range ch {
		if e.Name == evToken {
			busy := scrape()
			if !strings.Contains(busy, "vllm:num_requests_running 1\n") || strings.Contains(busy, "vllm:kv_cache_usage_perc 0\n") {
				t.Fatalf("/metrics during a job:\n%s", busy)
			}
			break
		}
	}
	resp.Body.Close()
}

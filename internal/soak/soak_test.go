package soak

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime/cpu"
	"github.com/llama-orch/orc/server"
	"github.com/llama-orch/orc/tokenizer"
)

// serveStories compiles the real stories260k model for the CPU device and
// serves it as orcrun serve does (HTTPServer on the connection-capped
// listener, and on POST /shutdown: drain, then close), on a loopback socket.
func serveStories(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stories.plan")
	if err := compiler.Compile(compiler.Options{Model: filepath.Join("..", "..", "testdata", "models", "stories260k-f32.gguf"), Out: dir, Target: "cpu", MaxTokens: 64}); err != nil {
		t.Fatal(err)
	}
	p, err := plans.Open(dir, plans.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(p.Manifest.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := cpu.Open(p, cpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{WorkerID: "soak-test", Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}, dev, tok)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(ln.Addr().String())
	srv.Start()
	go hs.Serve(srv.Listener(ln))
	stopped := make(chan struct{})
	go func() {
		select {
		case <-srv.ShutdownRequested():
			srv.Drain()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hs.Shutdown(ctx)
		case <-stopped:
		}
	}()
	t.Cleanup(func() {
		close(stopped)
		hs.Close()
		srv.Drain()
		dev.Close()
	})
	return "http://" + ln.Addr().String()
}

// runLogged runs a soak, fails the test if it cannot run, and logs the
// report.
func runLogged(t *testing.T, o Options) *Report {
	t.Helper()
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	rep.WriteText(&text)
	t.Log("\n" + text.String())
	return rep
}

func TestShortSoakOnTheCPUDevice(t *testing.T) {
	const n, cancels, drops = 30, 6, 6
	rep := runLogged(t, Options{
		URL: serveStories(t), Requests: n, Cancel: cancels, Disconnect: drops, MaxTokens: 48,
		Prompt: "Once upon a time", Seed: 1, RequestTimeout: 30 * time.Second,
	})
	if rep.Violations != 0 {
		t.Errorf("%d requests did not end with exactly one terminal event of the expected kind", rep.Violations)
	}
	kinds := map[string]int{}
	for k, outs := range rep.Outcomes {
		for _, c := range outs {
			kinds[k] += c
		}
	}
	if kinds[kindComplete] != n-cancels-drops || kinds[kindCancel] != cancels || kinds[kindDisconnect] != drops {
		t.Errorf("requests by kind %v, want %d complete, %d cancel, %d disconnect", kinds, n-cancels-drops, cancels, drops)
	}
	// Every request the server took ended as ok or cancelled, and the
	// server saw at least the cancels the client saw.
	so := rep.ServerOutcomes
	if so["ok"]+so["cancelled"] != n || len(so) > 2 {
		t.Errorf("server outcomes %v: want ok + cancelled = %d and nothing else", so, n)
	}
	if got := int64(rep.Outcomes[kindCancel][outCancelled]); so["cancelled"] < got {
		t.Errorf("server counted %d cancelled jobs, the client saw %d", so["cancelled"], got)
	}
	if rep.After.Goroutines > rep.Before.Goroutines+2 {
		t.Errorf("goroutines %d after the run, %d before", rep.After.Goroutines, rep.Before.Goroutines)
	}
	if rep.After.QueueDepth != 0 || rep.Before.QueueDepth != 0 {
		t.Errorf("queue depth %d before, %d after", rep.Before.QueueDepth, rep.After.QueueDepth)
	}
	if rep.After.VRAMBytesUsed != rep.Before.VRAMBytesUsed {
		t.Errorf("device memory %d after, %d before", rep.After.VRAMBytesUsed, rep.Before.VRAMBytesUsed)
	}
	if rep.TTFT.N != n || rep.InterToken.N == 0 {
		t.Errorf("time to first token over %d requests, inter-token over %d gaps", rep.TTFT.N, rep.InterToken.N)
	}
}

func TestLoadOnTheCPUDevice(t *testing.T) {
	rep := runLogged(t, Options{
		URL: serveStories(t), Requests: 10, Cancel: 2, Disconnect: 2, MaxTokens: 16, Prompt: "Once upon a time", Seed: 1,
		Clients: 16, Duration: 3 * time.Second, RequestTimeout: 30 * time.Second,
	})
	if rep.Violations != 0 {
		t.Errorf("%d violations under load", rep.Violations)
	}
	refused := rep.Outcomes[kindComplete]["http_429_QUEUE_FULL"] + rep.Outcomes[kindCancel]["http_429_QUEUE_FULL"] + rep.Outcomes[kindDisconnect]["http_429_QUEUE_FULL"]
	if refused == 0 || int64(refused) != rep.ServerOutcomes["rejected"] {
		t.Errorf("%d requests refused with 429, the server counted %d: 16 clients on a queue of 8 must meet refusals", refused, rep.ServerOutcomes["rejected"])
	}
	if rep.After.Goroutines > rep.Before.Goroutines+2 || rep.After.QueueDepth != 0 {
		t.Errorf("goroutines %d → %d, queue %d after the load", rep.Before.Goroutines, rep.After.Goroutines, rep.After.QueueDepth)
	}
}

func TestShutdownUnderLoad(t *testing.T) {
	rep := runLogged(t, Options{
		URL: serveStories(t), Requests: 10, Cancel: 2, Disconnect: 2, MaxTokens: 16, Prompt: "Once upon a time", Seed: 1,
		Clients: 8, Duration: 20 * time.Second, ShutdownAfter: time.Second, RequestTimeout: 30 * time.Second,
	})
	if rep.Violations != 0 {
		t.Errorf("%d violations across the shutdown", rep.Violations)
	}
	s := rep.Shutdown
	if s == nil || s.HealthCode != 503 || s.HealthStatus != "draining" || s.GoneSeconds == 0 || s.StreamsFinished == 0 {
		t.Errorf("shutdown %+v: want /health 503 draining, streams in flight finished, the server gone", s)
	}
	if rep.Seconds > 15 {
		t.Errorf("the clients ran %.1f s: they did not stop once the server was gone", rep.Seconds)
	}
}

func TestOptionsRefused(t *testing.T) {
	good := Options{URL: "http://127.0.0.1:1", Requests: 10, Cancel: 2, Disconnect: 2, MaxTokens: 8, Prompt: "x"}
	for _, c := range []struct {
		want string
		edit func(*Options)
	}{
		{"--url", func(o *Options) { o.URL = "" }},
		{"--requests", func(o *Options) { o.Requests = 0 }},
		{"exceed --requests", func(o *Options) { o.Cancel = 9 }},
		{"must not be negative", func(o *Options) { o.Disconnect = -1 }},
		{"--max-tokens", func(o *Options) { o.MaxTokens = 1 }},
		{"prompt", func(o *Options) { o.Prompt = "" }},
		{"inside --duration", func(o *Options) { o.Clients, o.ShutdownAfter = 4, time.Second }},
		{"inside --duration", func(o *Options) { o.Duration, o.ShutdownAfter = time.Second, 2*time.Second }},
	} {
		o := good
		c.edit(&o)
		if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error naming %q, got %v", c.want, err)
		}
	}
	// Good options against no server: the warm-up request fails clearly.
	if _, err := Run(context.Background(), good); err == nil || !strings.Contains(err.Error(), "warm-up") {
		t.Errorf("no server: %v", err)
	}
}

func TestPlanSpreadsKinds(t *testing.T) {
	kinds := plan(Options{Requests: 1000, Cancel: 200, Disconnect: 200, Seed: 1})
	for tenth := range 10 {
		count := map[string]int{}
		for _, k := range kinds[tenth*100 : tenth*100+100] {
			count[k]++
		}
		if count[kindCancel] == 0 || count[kindDisconnect] == 0 || count[kindComplete] == 0 {
			t.Errorf("tenth %d has %v: every tenth needs each kind", tenth+1, count)
		}
	}
}

func TestPercentilesNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	p := percentiles(d)
	if p.N != 100 || p.P50 != 50 || p.P95 != 95 || p.P99 != 99 || p.Max != 100 {
		t.Fatalf("percentiles of 1..100 ms: %+v", p)
	}
	if p := percentiles(d[99:]); p.P50 != 1 || p.P99 != 1 {
		t.Fatalf("percentiles of one sample: %+v", p)
	}
}

func TestParseMetrics(t *testing.T) {
	text := "# HELP orc_goroutines x\n# TYPE orc_goroutines gauge\norc_goroutines 17\norc_queue_depth 2\n" +
		"orc_requests_total{outcome=\"ok\"} 12\norc_requests_total{outcome=\"cancelled\"} 3\norc_uptime_seconds 1.5\n"
	g, q, o, err := parseMetrics(strings.NewReader(text))
	if err != nil || g != 17 || q != 2 || o["ok"] != 12 || o["cancelled"] != 3 || len(o) != 2 {
		t.Fatalf("got %d %d %v %v", g, q, o, err)
	}
	if _, _, _, err := parseMetrics(strings.NewReader("orc_queue_depth 0\n")); err == nil || !strings.Contains(err.Error(), "orc_goroutines") {
		t.Fatalf("missing gauge: %v", err)
	}
}

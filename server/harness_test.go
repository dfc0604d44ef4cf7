package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/llama-orch/orc/internal/soak"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/cpu"
	"github.com/llama-orch/orc/tokenizer"
)

// The server tests run real plans on the CPU reference device, compiled by
// the real orcc binary (built here, not imported: the server never links
// the compiler): the trained stories260k model, and a tiny synthetic
// Qwen2-architecture model whose chat template is ChatML.
var testPlans = map[string]string{}

// orccPath is the orcc binary TestMain built, for tests that compile more
// plans.
var orccPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "orc-server-test")
	if err != nil {
		panic(err)
	}
	code := 1
	if err := buildPlans(dir); err != nil {
		fmt.Fprintln(os.Stderr, "server tests: building plans:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func buildPlans(dir string) error {
	orcc := filepath.Join(dir, "orcc")
	orccPath = orcc
	if err := run("go", "build", "-o", orcc, "../cmd/orcc"); err != nil {
		return err
	}
	stories := filepath.Join("..", "..", "shared", "testdata", "models", "stories260k-f32.gguf")
	testPlans["stories"] = filepath.Join(dir, "stories.plan")
	if err := run(orcc, "compile", stories, "-o", testPlans["stories"], "--device", "cpu", "--max-tokens", "64"); err != nil {
		return err
	}
	qwen := filepath.Join(dir, "qwen.gguf")
	if err := run(orcc, "synth", "--preset", "qwen2.5-0.5b-tiny", "--quant", "q4_k_m", "-o", qwen, "--seed", "7"); err != nil {
		return err
	}
	testPlans["qwen"] = filepath.Join(dir, "qwen.plan")
	return run(orcc, "compile", qwen, "-o", testPlans["qwen"], "--device", "cpu", "--max-tokens", "64")
}

// startServer serves a plan on a loopback socket.
func startServer(t *testing.T, plan string, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	srv := newServer(t, plan, cfg)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return srv, hs
}

// newServer opens a plan on the CPU device and starts a server over it;
// the test's cleanup drains it and closes the device.
func newServer(t *testing.T, plan string, cfg Config) *Server {
	t.Helper()
	dev, tok := openCPU(t, testPlans[plan])
	return serveDevice(t, dev, tok, cfg)
}

// openCPU loads the plan in dir on the CPU device with its tokenizer.
func openCPU(t *testing.T, dir string) (runtime.Device, tokenizer.Tokenizer) {
	t.Helper()
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
	return dev, tok
}

// serveDevice starts a server over dev; the test's cleanup drains it and
// closes the device.
func serveDevice(t *testing.T, dev runtime.Device, tok tokenizer.Tokenizer, cfg Config) *Server {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	cfg.WorkerID = "test-worker"
	srv := New(cfg, dev, tok)
	srv.Start()
	t.Cleanup(func() {
		srv.Drain()
		dev.Close()
	})
	return srv
}

// sseEvent is one parsed server-sent event, as the soak driver reads them.
type sseEvent = soak.Event

// postExecute posts a request and returns the response; the caller reads
// events with readEvents.
func postExecute(t *testing.T, base string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(base+"/execute", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readEvents parses SSE events until EOF, sending each on the channel.
func readEvents(r io.Reader, out chan<- sseEvent) {
	defer close(out)
	soak.ReadEvents(r, func(e sseEvent) bool { out <- e; return true })
}

// collect reads a whole stream.
func collect(t *testing.T, resp *http.Response) []sseEvent {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	ch := make(chan sseEvent, 16)
	go readEvents(resp.Body, ch)
	var evs []sseEvent
	for e := range ch {
		evs = append(evs, e)
	}
	return evs
}

func textOf(evs []sseEvent) string {
	var sb strings.Builder
	for _, e := range evs {
		if e.Name == evToken {
			sb.WriteString(e.Data["t"].(string))
		}
	}
	return sb.String()
}

// logBuffer collects a server's JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(b, nil)) }

// lines returns the logged lines whose msg is msg.
func (b *logBuffer) lines(msg string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(b.buf.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

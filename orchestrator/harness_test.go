package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llama-orch/orc/internal/soak"
)

// The orchestrator's tests run the real system on loopback: orcd in this
// process (its real HTTP server), orcpool and its orcrun workers as the real
// binaries, built here, serving plans compiled by the real orcc on the CPU
// device: the trained stories260k model, and a tiny synthetic Qwen2-
// architecture model for chat.
var bins = map[string]string{}
var plans = map[string]string{}

const poolToken = "test-pool-token"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "orc-orchestrator-test")
	if err != nil {
		panic(err)
	}
	code := 1
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "orchestrator tests:", err)
	} else {
		code = m.Run()
	}
	shared.close()
	os.RemoveAll(dir)
	os.Exit(code)
}

func runCmd(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func build(dir string) error {
	for _, b := range []string{"orcc", "orcrun", "orcpool"} {
		bins[b] = filepath.Join(dir, b)
		if err := runCmd("go", "build", "-o", bins[b], "../cmd/"+b); err != nil {
			return err
		}
	}
	stories := filepath.Join("..", "..", "shared", "testdata", "models", "stories260k-f32.gguf")
	plans["stories"] = filepath.Join(dir, "stories.plan")
	if err := runCmd(bins["orcc"], "compile", stories, "-o", plans["stories"], "--device", "cpu", "--max-tokens", "64"); err != nil {
		return err
	}
	qwen := filepath.Join(dir, "qwen.gguf")
	if err := runCmd(bins["orcc"], "synth", "--preset", "qwen2.5-0.5b-tiny", "--quant", "q4_k_m", "-o", qwen, "--seed", "7"); err != nil {
		return err
	}
	plans["qwen"] = filepath.Join(dir, "qwen.plan")
	if err := runCmd(bins["orcc"], "compile", qwen, "-o", plans["qwen"], "--device", "cpu", "--max-tokens", "64"); err != nil {
		return err
	}
	// A copy of the stories plan with one weight byte flipped: its sha256
	// no longer matches the manifest, so a worker refuses to load it.
	plans["tampered"] = filepath.Join(dir, "tampered.plan")
	if err := runCmd("cp", "-r", plans["stories"], plans["tampered"]); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(plans["tampered"], "weights.bin"), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 1)
	f.ReadAt(b, 4096)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, 4096)
	return err
}

// orcd is one orchestrator serving on a loopback port.
type orcd struct {
	o    *Orchestrator
	url  string
	logs *syncBuffer
	hs   *http.Server
}

// syncBuffer collects log lines written from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newOrcd(cfg Config, dbPath string) (*orcd, error) {
	logs := &syncBuffer{}
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	cfg.PoolToken = poolToken
	cfg.ArtifactsPath = dbPath
	o, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		o.Close()
		return nil, err
	}
	hs := o.HTTPServer(ln.Addr().String())
	go hs.Serve(ln)
	return &orcd{o: o, url: "http://" + ln.Addr().String(), logs: logs, hs: hs}, nil
}

func (d *orcd) close() {
	d.hs.Close()
	d.o.Close()
}

// startOrcd starts an orchestrator for one test.
func startOrcd(t *testing.T, cfg Config) *orcd {
	t.Helper()
	d, err := newOrcd(cfg, filepath.Join(t.TempDir(), "artifacts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	return d
}

// poolProc is a running orcpool.
type poolProc struct {
	cmd  *exec.Cmd
	logs *syncBuffer
}

func launchPool(orcdURL, id, plan string, workers int, extra ...string) (*poolProc, error) {
	args := append([]string{"--pool-id", id, "--plan", plan, "--cpu-workers", fmt.Sprint(workers),
		"--orchestrator", orcdURL, "--orcrun", bins["orcrun"], "--threads", "1", "--shutdown-grace", "5s"}, extra...)
	cmd := exec.Command(bins["orcpool"], args...)
	cmd.Env = append(os.Environ(), "ORC_POOL_TOKEN="+poolToken)
	// A test binary that dies (a timeout) takes its pool managers, and so
	// their workers, with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &poolProc{cmd: cmd, logs: logs}, nil
}

// stop drains the pool manager as SIGTERM does and waits for it.
func (p *poolProc) stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		return fmt.Errorf("orcpool did not exit within 20 s of SIGTERM")
	}
}

// startPool runs an orcpool for one test and waits until its workers are
// ready in orcd.
func startPool(t *testing.T, d *orcd, id, plan string, workers int, extra ...string) *poolProc {
	t.Helper()
	p, err := launchPool(d.url, id, plan, workers, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("orcpool %s: %v\n%s", id, err, p.logs.String())
		}
	})
	if err := waitReady(d, id, workers, 60*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, p.logs.String())
	}
	return p
}

// waitReady waits until n workers of the pool take tasks.
func waitReady(d *orcd, id string, n int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		d.o.mu.Lock()
		ready := 0
		if p := d.o.pools[id]; p != nil {
			for _, w := range p.workers {
				if w.placeable() {
					ready++
				}
			}
		}
		d.o.mu.Unlock()
		if ready >= n {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("pool %s: %d workers not ready within %s", id, n, within)
}

// sharedSystem is orcd with a stories pool of two CPU workers and a qwen
// pool of one, started by the first test that needs it and kept for the
// package's tests that leave it as they found it.
type sharedSystem struct {
	once  sync.Once
	err   error
	d     *orcd
	pools []*poolProc
	dir   string
}

var shared sharedSystem

func system(t *testing.T) *orcd {
	t.Helper()
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "orcd-shared")
		if shared.err != nil {
			return
		}
		shared.d, shared.err = newOrcd(Config{}, filepath.Join(shared.dir, "artifacts.db"))
		if shared.err != nil {
			return
		}
		for _, p := range []struct {
			id, plan string
			n        int
		}{{"stories", plans["stories"], 2}, {"qwen", plans["qwen"], 1}} {
			pp, err := launchPool(shared.d.url, p.id, p.plan, p.n)
			if err != nil {
				shared.err = err
				return
			}
			shared.pools = append(shared.pools, pp)
			if err := waitReady(shared.d, p.id, p.n, 60*time.Second); err != nil {
				shared.err = fmt.Errorf("%v\n%s", err, pp.logs.String())
				return
			}
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.d
}

func (s *sharedSystem) close() {
	for _, p := range s.pools {
		p.stop()
	}
	if s.d != nil {
		s.d.close()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// storiesModel is the stories plan's model name, which orcd routes by.
const storiesModel = "tinyllamas-stories-260k"

// call sends a JSON request and decodes a JSON answer.
func call(t *testing.T, method, url string, body any, hdr ...string) (*http.Response, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &m)
	return resp, m
}

// submit posts a task and fails the test unless it is admitted.
func submit(t *testing.T, d *orcd, req map[string]any) string {
	t.Helper()
	resp, m := call(t, "POST", d.url+"/v1/tasks", req)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/tasks %v: %d %v", req, resp.StatusCode, m)
	}
	return m["task_id"].(string)
}

// stream reads a task's whole stream.
func stream(t *testing.T, d *orcd, id string) []soak.Event {
	t.Helper()
	resp, err := http.Get(d.url + "/v1/tasks/" + id + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream %s: %s", id, resp.Status)
	}
	var evs []soak.Event
	soak.ReadEvents(resp.Body, func(e soak.Event) bool { evs = append(evs, e); return true })
	return evs
}

// tokensOf concatenates a stream's token texts.
func tokensOf(evs []soak.Event) string {
	var sb strings.Builder
	for _, e := range evs {
		if e.Name == "token" {
			sb.WriteString(e.Data["t"].(string))
		}
	}
	return sb.String()
}

func names(evs []soak.Event) []string {
	var n []string
	for _, e := range evs {
		n = append(n, e.Name)
	}
	return n
}

// checkFraming holds a stream to OC-CTRL-2027/2029: started first, then
// tokens with metrics among them, then exactly one end or error, last;
// token indexes count up from 0.
func checkFraming(t *testing.T, evs []soak.Event) soak.Event {
	t.Helper()
	if len(evs) < 2 || evs[0].Name != "started" {
		t.Fatalf("stream %v: want started first", names(evs))
	}
	next := 0
	for i, e := range evs[1:] {
		switch e.Name {
		case "token":
			if int(e.Data["i"].(float64)) != next {
				t.Fatalf("token %d has index %v", next, e.Data["i"])
			}
			next++
		case "metrics":
		case "end", "error":
			if i+2 != len(evs) {
				t.Fatalf("stream %v: %s is not last", names(evs), e.Name)
			}
		default:
			t.Fatalf("stream %v: unexpected event %q", names(evs), e.Name)
		}
	}
	last := evs[len(evs)-1]
	if last.Name != "end" && last.Name != "error" {
		t.Fatalf("stream %v: no terminal event", names(evs))
	}
	return last
}

package poolmanager

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// The ready callback is refused unless it comes with the pool token, from a
// worker this manager started and is starting, on the plan it was given,
// at a URI that answers. (The accepted path runs in the orchestrator's
// tests with real workers.)
func TestReadyCallbackValidation(t *testing.T) {
	plan := t.TempDir()
	self, _ := os.Executable()
	m, err := New(Config{PoolID: "p", Plan: plan, Devices: []string{"cpu"}, Orcrun: self, Token: "tok",
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	starting := &proc{id: "p-g1-w0", device: "cpu", plan: plan, status: poolapi.StatusStarting, ready: make(chan string, 1)}
	ready := &proc{id: "p-g1-w1", device: "cpu", plan: plan, status: poolapi.StatusReady}
	m.workers = []*proc{starting, ready}
	hs := httptest.NewServer(m.handler())
	defer hs.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String()
	ln.Close()
	for _, c := range []struct {
		token  string
		cb     poolapi.WorkerReady
		status int
	}{
		{"wrong", poolapi.WorkerReady{WorkerID: "p-g1-w0", ModelRef: plan, URI: closed}, 401},
		{"tok", poolapi.WorkerReady{WorkerID: "stranger", ModelRef: plan, URI: closed}, 404},
		{"tok", poolapi.WorkerReady{WorkerID: "p-g1-w1", ModelRef: plan, URI: closed}, 409},
		{"tok", poolapi.WorkerReady{WorkerID: "p-g1-w0", ModelRef: "/other.plan", URI: closed}, 400},
		{"tok", poolapi.WorkerReady{WorkerID: "p-g1-w0", ModelRef: plan, VRAMBytes: -1, URI: closed}, 400},
		{"tok", poolapi.WorkerReady{WorkerID: "p-g1-w0", ModelRef: plan, URI: closed}, 400},
	} {
		b, _ := json.Marshal(c.cb)
		req, _ := http.NewRequest("POST", hs.URL+poolapi.ReadyPath, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%+v with token %q: %d %s; want %d", c.cb, c.token, resp.StatusCode, msg, c.status)
		}
	}
	if starting.status != poolapi.StatusStarting {
		t.Fatalf("a refused callback changed the worker to %s", starting.status)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	self, _ := os.Executable()
	good := Config{PoolID: "p", Plan: t.TempDir(), Devices: []string{"cpu"}, Orcrun: self, Token: "t"}
	for name, mutate := range map[string]func(*Config){
		"no pool id": func(c *Config) { c.PoolID = "" },
		"no devices": func(c *Config) { c.Devices = nil },
		"no token":   func(c *Config) { c.Token = "" },
		"no plan":    func(c *Config) { c.Plan = "/no/such/plan" },
		"no orcrun":  func(c *Config) { c.Orcrun = "/no/such/orcrun" },
	} {
		c := good
		mutate(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(good); err != nil {
		t.Fatal(err)
	}
}

package poolmanager

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// A worker's GET /health answers 200 with ready or busy while it takes work
// and 503 with draining or failed once it does not (orcrun serve's
// contract). Draining is a status, not a failed check: the worker finishes
// its job and is neither routed to nor killed; failed stops routing at once
// and counts towards a restart.
func TestHealthStatuses(t *testing.T) {
	self, _ := os.Executable()
	m, err := New(Config{PoolID: "p", Plan: t.TempDir(), Devices: []string{"cpu"}, Orcrun: self, Token: "tok",
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		code       int
		body, want string
		failed     bool
	}{
		{200, `{"status":"ready"}`, poolapi.StatusReady, false},
		{200, `{"status":"busy"}`, poolapi.StatusBusy, false},
		{503, `{"status":"draining"}`, poolapi.StatusDraining, false},
		{503, `{"status":"failed","error":"residency"}`, poolapi.StatusFailed, true},
		{200, `{"status":"healthy"}`, "", true},
		{500, `{"status":"ready"}`, "", true},
	} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.code)
			io.WriteString(w, c.body)
		}))
		got, err := m.health(&proc{id: "p-g1-w0", uri: hs.URL})
		hs.Close()
		if got != c.want || (err != nil) != c.failed {
			t.Errorf("%d %s: status %q, err %v; want %q, failed %v", c.code, c.body, got, err, c.want, c.failed)
		}
	}
}

package poolmanager

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"github.com/llama-orch/orc/internal/httpjson"
	"github.com/llama-orch/orc/internal/netsafe"
	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// handler serves the control endpoints; every one needs the pool token.
func (m *Manager) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+poolapi.ReadyPath, m.handleReady)
	mux.HandleFunc("POST "+poolapi.ReloadPath, m.handleReload)
	mux.HandleFunc("GET /v2/internal/status", func(w http.ResponseWriter, r *http.Request) { httpjson.Write(w, http.StatusOK, m.Status()) })
	token := netsafe.NewBearer(m.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !token.Allows(r) {
			httpjson.Write(w, http.StatusUnauthorized, map[string]string{"code": "UNAUTHORIZED", "message": "missing or invalid pool token"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, status int, code, msg string) {
	httpjson.Write(w, status, map[string]string{"code": code, "message": msg})
}

// handleReady validates a worker's ready callback: the worker is one this
// manager started and still starting, it loaded the plan it was given, and
// it answers at the URI it reports. Then it is ready.
func (m *Manager) handleReady(w http.ResponseWriter, r *http.Request) {
	var cb poolapi.WorkerReady
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&cb); err != nil {
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "body: "+err.Error())
		return
	}
	p := m.find(cb.WorkerID)
	if p == nil {
		refuse(w, http.StatusNotFound, "WORKER_NOT_FOUND", "no worker "+cb.WorkerID+" was started by this pool manager")
		return
	}
	m.mu.Lock()
	status, plan := p.status, p.plan
	m.mu.Unlock()
	switch {
	case status != poolapi.StatusStarting:
		refuse(w, http.StatusConflict, "INVALID_REQUEST", "worker "+cb.WorkerID+" is "+status+", not starting")
		return
	case cb.ModelRef != plan:
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", fmt.Sprintf("model_ref %q: the worker was started on %q", cb.ModelRef, plan))
		return
	case cb.VRAMBytes < 0:
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "vram_bytes: negative")
		return
	}
	h, err := m.fetchHealth(cb.URI)
	if err != nil {
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "uri "+cb.URI+" does not answer: "+err.Error())
		return
	}
	m.mu.Lock()
	if p.status != poolapi.StatusStarting || p.ready == nil {
		m.mu.Unlock()
		refuse(w, http.StatusConflict, "INVALID_REQUEST", "worker "+cb.WorkerID+" is no longer starting")
		return
	}
	p.status, p.uri, p.slots = poolapi.StatusReady, cb.URI, h.Slots
	if plan == m.plan || m.model == "" {
		m.model, m.ctxMax = h.Model, h.ContextLength
	}
	p.ready <- cb.URI
	p.ready = nil
	m.mu.Unlock()
	m.changedNow()
	httpjson.Write(w, http.StatusOK, map[string]string{"worker_id": cb.WorkerID, "status": poolapi.StatusReady})
}

// find returns the worker with id among the serving and starting ones.
func (m *Manager) find(id string) *proc {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range append(append([]*proc(nil), m.workers...), m.starting...) {
		if p.id == id {
			return p
		}
	}
	return nil
}

// handleReload switches the pool to another plan atomically: a worker per
// device is started on it beside the serving ones; only when every one is
// ready does the pool switch, in one registration with orcd, and the old
// workers drain. If any fails, the new ones are stopped and the old plan
// keeps serving: rolled back.
func (m *Manager) handleReload(w http.ResponseWriter, r *http.Request) {
	var req poolapi.ReloadRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "body: "+err.Error())
		return
	}
	m.reloadMu.Lock()
	defer m.reloadMu.Unlock()
	m.mu.Lock()
	old := m.plan
	m.mu.Unlock()
	res := poolapi.ReloadResult{PoolID: m.cfg.PoolID, ModelRef: old}
	if st, err := os.Stat(req.ModelRef); err != nil || !st.IsDir() {
		res.Error = "model_ref " + req.ModelRef + ": not a plan directory on this host"
		httpjson.Write(w, http.StatusConflict, res)
		return
	}
	first := make(chan error, len(m.cfg.Devices))
	m.mu.Lock()
	m.starting = m.spawnGeneration(req.ModelRef, first)
	fresh := m.starting
	m.mu.Unlock()
	var failed error
	for range fresh {
		if err := <-first; err != nil && failed == nil {
			failed = err
		}
	}
	if failed != nil {
		m.mu.Lock()
		m.starting = nil
		m.mu.Unlock()
		for _, p := range fresh {
			m.retire(p)
		}
		m.log.Warn("reload rolled back", "model_ref", req.ModelRef, "err", failed.Error())
		res.RolledBack, res.Error = true, failed.Error()
		httpjson.Write(w, http.StatusConflict, res)
		return
	}
	m.mu.Lock()
	retired := m.workers
	m.workers, m.starting, m.plan = fresh, nil, req.ModelRef
	h, err := m.fetchHealthLocked(fresh[0])
	if err == nil {
		m.model, m.ctxMax = h.Model, h.ContextLength
	}
	m.mu.Unlock()
	m.register() // the switch, before answering
	for _, p := range retired {
		go m.retire(p)
	}
	m.log.Info("reloaded", "model_ref", req.ModelRef, "from", old)
	res.ModelRef, res.Switched = req.ModelRef, true
	httpjson.Write(w, http.StatusOK, res)
}

// fetchHealthLocked reads a ready worker's health with m.mu held briefly
// released around the request.
func (m *Manager) fetchHealthLocked(p *proc) (*workerHealth, error) {
	uri := p.uri
	m.mu.Unlock()
	defer m.mu.Lock()
	return m.fetchHealth(uri)
}

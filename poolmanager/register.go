package poolmanager

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// registrar pushes the registration on every change and every heartbeat.
func (m *Manager) registrar() {
	defer m.wg.Done()
	t := time.NewTicker(m.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-m.changed:
		case <-t.C:
		}
		m.register()
	}
}

// register sends the pool's registration to orcd; a failure is logged and
// the next heartbeat tries again.
func (m *Manager) register() {
	if m.cfg.Orchestrator == "" {
		return
	}
	reg := m.snapshot()
	if reg.Model == "" {
		return // no worker has come up yet: nothing to route to
	}
	body, _ := json.Marshal(reg)
	if err := m.call(http.MethodPut, body); err != nil {
		m.log.Warn("registration failed", "orchestrator", m.cfg.Orchestrator, "err", err.Error())
	}
}

func (m *Manager) deregister() {
	if m.cfg.Orchestrator == "" {
		return
	}
	if err := m.call(http.MethodDelete, nil); err != nil {
		m.log.Warn("withdrawal failed", "orchestrator", m.cfg.Orchestrator, "err", err.Error())
	}
}

func (m *Manager) call(method string, body []byte) error {
	req, err := http.NewRequest(method, strings.TrimSuffix(m.cfg.Orchestrator, "/")+poolapi.PoolsPath+"/"+m.cfg.PoolID, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+m.cfg.Token)
	resp, err := m.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var e struct{ Message string }
		json.NewDecoder(resp.Body).Decode(&e)
		return &callError{resp.Status, e.Message}
	}
	return nil
}

type callError struct{ status, msg string }

func (e *callError) Error() string { return e.status + ": " + e.msg }

package orchestrator

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"time"

	"github.com/llama-orch/orc/internal/httpjson"
	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// handleCapabilities is discovery (OC-CTRL-2060, 2061): the API version and,
// per pool, what it serves and its limits.
func (o *Orchestrator) handleCapabilities(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	o.mu.Lock()
	pools := make([]map[string]any, 0, len(o.pools))
	for _, p := range o.sortedPoolsLocked() {
		workers := 0
		for _, wk := range p.workers {
			if wk.placeable() {
				workers += wk.slots()
			}
		}
		pools = append(pools, map[string]any{
			"pool_id": p.id, "engine": p.reg.Engine, "engine_version": p.reg.EngineVersion,
			"sampler_profile_version": samplerProfile, "model": p.reg.Model, "model_ref": p.reg.ModelRef,
			"ctx_max": p.reg.CtxMax, "max_tokens_out": p.reg.MaxTokensOut,
			// Jobs the ready workers run at once.
			"slots": workers, "ready": p.ready(now, o.cfg.PoolTimeout),
			"supported_workloads": []string{"completion", "chat"},
			"rate_limits": map[string]any{
				"queue_capacity": o.cfg.QueueCapacity, "queue_policy": o.cfg.QueuePolicy,
				"worker_slots": o.cfg.WorkerSlots, "session_token_budget": o.cfg.SessionTokenBudget,
				"session_time_budget_ms": o.cfg.SessionTimeBudget.Milliseconds(),
			},
			"features": map[string]bool{
				"pinning": !o.cfg.DisablePinning, "sessions": true, "cancel": true, "artifacts": true,
				"openai": true, "sse_micro_batch": false, "http2": true,
			},
		})
	}
	o.mu.Unlock()
	httpjson.Write(w, http.StatusOK, map[string]any{"api_version": APIVersion, "engine": Engine, "engine_version": EngineVersion, "pools": pools})
}

// samplerProfile names the sampler's behaviour: orc's sampler applies
// repetition penalty, temperature, top-k, top-p and min-p in that order.
const samplerProfile = "orc-sampler/1"

func (o *Orchestrator) sortedPoolsLocked() []*pool {
	ps := make([]*pool, 0, len(o.pools))
	for _, p := range o.pools {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].id < ps[j].id })
	return ps
}

func (o *Orchestrator) poolOr404(w http.ResponseWriter, id string) *pool {
	p := o.pools[id]
	if p == nil {
		writeError(w, newError(http.StatusNotFound, CodeNotFound, "no pool "+id+" is registered"))
	}
	return p
}

// handlePoolHealth reports liveness, readiness, draining and a metrics
// snapshot (OC-CTRL-2001).
func (o *Orchestrator) handlePoolHealth(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	o.mu.Lock()
	p := o.poolOr404(w, r.PathValue("id"))
	if p == nil {
		o.mu.Unlock()
		return
	}
	workers := make([]map[string]any, 0, len(p.workers))
	for _, wk := range p.workers {
		workers = append(workers, map[string]any{
			"worker_id": wk.ID, "status": wk.Status, "device": wk.Device, "pid": wk.PID, "restarts": wk.Restarts,
			"placed": wk.inflight, "reachable": !wk.suspect,
		})
	}
	queued := 0
	for _, t := range o.queue {
		if o.eligible(t, p) {
			queued++
		}
	}
	body := map[string]any{
		"pool_id": p.id, "live": p.live(now, o.cfg.PoolTimeout), "ready": p.ready(now, o.cfg.PoolTimeout),
		"draining": p.draining || p.reg.Draining, "model": p.reg.Model, "model_ref": p.reg.ModelRef,
		"workers": workers,
		"metrics": map[string]any{
			"queue_depth": queued, "tasks_placed": p.inflight(), "tasks_done": p.stats.tasksDone,
			"tokens_out": p.stats.tokensOut, "mean_job_ms": p.stats.meanJob.Milliseconds(),
			"last_seen_ms": now.Sub(p.lastSeen).Milliseconds(),
		},
	}
	if p.draining {
		body["drain_deadline"] = p.deadline.UTC().Format(time.RFC3339Nano)
	}
	o.mu.Unlock()
	httpjson.Write(w, http.StatusOK, body)
}

type drainRequest struct {
	DeadlineMs *int64 `json:"deadline_ms"`
}

// handleDrain starts draining a pool (OC-CTRL-2002): it takes no new tasks
// from now on, tasks pinned to it that still wait fail POOL_UNREADY, and
// the tasks running on it have until the deadline, after which they end
// with POOL_UNAVAILABLE (retriable). The pool stays drained until it is
// reloaded or registered afresh.
func (o *Orchestrator) handleDrain(w http.ResponseWriter, r *http.Request) {
	var req drainRequest
	if e := decodeBody(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	if req.DeadlineMs == nil || *req.DeadlineMs < 0 {
		writeError(w, invalidParams("deadline_ms: required, at least 0"))
		return
	}
	id := r.PathValue("id")
	deadline := time.Duration(*req.DeadlineMs) * time.Millisecond
	o.mu.Lock()
	p := o.poolOr404(w, id)
	if p == nil {
		o.mu.Unlock()
		return
	}
	p.draining = true
	p.deadline = time.Now().Add(deadline)
	var pinned []*task
	for _, t := range o.queue {
		if t.pinned == id {
			pinned = append(pinned, t)
		}
	}
	running := p.inflight()
	o.mu.Unlock()
	o.log.Info("draining", "pool_id", id, "deadline_ms", *req.DeadlineMs, "running", running, "correlation_id", correlationID(r))
	for _, t := range pinned {
		o.abort(t, newError(http.StatusServiceUnavailable, CodePoolUnready, "pool "+id+" is draining").onPool(Engine, id))
	}
	gen := p.deadline
	time.AfterFunc(deadline, func() { o.cutDrained(p, gen) })
	httpjson.Write(w, http.StatusAccepted, map[string]any{"pool_id": id, "draining": true, "deadline_ms": *req.DeadlineMs, "running": running})
}

// cutDrained ends what still runs on a drained pool at its deadline.
func (o *Orchestrator) cutDrained(p *pool, deadline time.Time) {
	o.mu.Lock()
	if !p.draining || !p.deadline.Equal(deadline) {
		o.mu.Unlock()
		return
	}
	var running []*task
	for _, t := range o.tasks {
		if t.openai == nil && t.onPool(p) {
			running = append(running, t)
		}
	}
	o.mu.Unlock()
	for _, t := range running {
		o.abort(t, newError(http.StatusServiceUnavailable, CodePoolUnavailable, "pool "+p.id+" drained: its deadline passed").retriableAfter(1000).onPool(Engine, p.id))
	}
}

// onPool: the task is placed on one of p's workers and not finished.
func (t *task) onPool(p *pool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.done && t.worker != nil && t.worker.pool == p
}

type reloadRequest struct {
	ModelRef string `json:"model_ref"`
}

// handleReload asks the pool's manager to switch it to another plan
// (OC-CTRL-2003): the new plan's workers are started and must be ready
// before the switch, which is one registration; else they are stopped, the
// old plan keeps serving, and the answer says so.
func (o *Orchestrator) handleReload(w http.ResponseWriter, r *http.Request) {
	var req reloadRequest
	if e := decodeBody(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	if req.ModelRef == "" {
		writeError(w, invalidParams("model_ref: required (a plan directory on the pool's host)"))
		return
	}
	id := r.PathValue("id")
	o.mu.Lock()
	p := o.poolOr404(w, id)
	var control string
	if p != nil {
		control = p.reg.ControlURL
	}
	o.mu.Unlock()
	if p == nil {
		return
	}
	if control == "" {
		writeError(w, newError(http.StatusConflict, CodeInvalidParams, "pool "+id+" registered no control URL: its manager cannot reload").onPool(Engine, id))
		return
	}
	body, _ := json.Marshal(poolapi.ReloadRequest{ModelRef: req.ModelRef})
	preq, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, control+poolapi.ReloadPath, bytes.NewReader(body))
	preq.Header.Set("Authorization", "Bearer "+o.cfg.PoolToken)
	preq.Header.Set("Content-Type", "application/json")
	preq.Header.Set("X-Correlation-Id", correlationID(r))
	resp, err := o.client.Do(preq)
	if err != nil {
		writeError(w, newError(http.StatusBadGateway, CodePoolUnavailable, "pool manager of "+id+" unreachable: "+err.Error()).retriableAfter(1000).onPool(Engine, id))
		return
	}
	defer resp.Body.Close()
	var res poolapi.ReloadResult
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&res); err != nil {
		writeError(w, newError(http.StatusBadGateway, CodeInternal, "pool manager of "+id+" answered "+resp.Status+" without a result").onPool(Engine, id))
		return
	}
	o.log.Info("reload", "pool_id", id, "model_ref", res.ModelRef, "switched", res.Switched, "rolled_back", res.RolledBack, "correlation_id", correlationID(r))
	if !res.Switched {
		httpjson.Write(w, http.StatusConflict, map[string]any{
			"code": CodeInvalidParams, "message": "reload to " + req.ModelRef + " failed and was rolled back: " + res.Error,
			"retriable": false, "engine": Engine, "pool_id": id, "rolled_back": res.RolledBack, "model_ref": res.ModelRef,
		})
		return
	}
	o.mu.Lock()
	p.draining = false
	o.mu.Unlock()
	httpjson.Write(w, http.StatusOK, res)
}

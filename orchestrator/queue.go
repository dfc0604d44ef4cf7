package orchestrator

import (
	"net/http"
	"slices"
	"time"

	"github.com/llama-orch/orc/internal/httpjson"
	"github.com/llama-orch/orc/internal/netsafe"
)

// handleSubmit admits a task (OC-CTRL-2010): its fields, its model or pin,
// its length against the pool's limits and its session's budget are checked
// before it is queued; a full queue answers 429 (OC-CTRL-2011).
func (o *Orchestrator) handleSubmit(w http.ResponseWriter, r *http.Request) {
	var req TaskRequest
	if e := decodeBody(w, r, &req); e != nil {
		o.refuse(w, r, e)
		return
	}
	if e := validateTask(&req); e != nil {
		o.refuse(w, r, e)
		return
	}
	if req.TaskID == "" {
		req.TaskID = netsafe.UUID()
	}
	t := newTask(req.TaskID, correlationID(r), req)
	dropped, e := o.admit(t)
	if e != nil {
		o.refuse(w, r, e)
		return
	}
	if dropped != nil {
		o.dropped(dropped)
	}
	go o.runTask(t)
	o.log.Info("admitted", "task_id", t.id, "model", t.model, "pool_id", t.pinned, "session_id", req.SessionID,
		"queue_position", t.position, "predicted_start_ms", t.predicted, "max_tokens", t.maxTokens,
		"prompt_chars", len(req.Prompt), "correlation_id", t.corr)
	httpjson.Write(w, http.StatusAccepted, map[string]any{
		"task_id": t.id, "queue_position": t.position, "predicted_start_ms": t.predicted,
		"stream": "/v1/tasks/" + t.id + "/stream",
	})
}

// refuse answers an admission failure and counts it.
func (o *Orchestrator) refuse(w http.ResponseWriter, r *http.Request, e *apiError) {
	o.metrics.refused(e)
	o.log.Info("refused", "code", e.Code, "policy_label", e.PolicyLabel, "message", e.Message, "correlation_id", correlationID(r))
	writeError(w, e)
}

// admit checks a task against the pools, its session and the queue, and
// queues it; with the drop-lru policy a full queue gives up its oldest task,
// returned for the caller to end.
func (o *Orchestrator) admit(t *task) (dropped *task, e *apiError) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, dup := o.tasks[t.id]; dup {
		return nil, invalidParams("task_id " + t.id + ": a task with this id exists")
	}
	limits, e := o.resolveTarget(t)
	if e != nil {
		return nil, e
	}
	t.maxTokens = min(256, limits.MaxTokensOut)
	if t.req.MaxTokens != nil {
		t.maxTokens = *t.req.MaxTokens
	}
	if t.maxTokens > limits.MaxTokensOut || t.maxTokens >= limits.CtxMax {
		return nil, newError(http.StatusBadRequest, CodeInvalidParams, "max_tokens "+itoa(t.maxTokens)+
			" exceeds the model's limits (max_tokens_out "+itoa(limits.MaxTokensOut)+", ctx_max "+itoa(limits.CtxMax)+")").onPool(Engine, t.pinned)
	}
	if t.req.SessionID != "" {
		s, e := o.sessionFor(t.req.SessionID, t.maxTokens)
		if e != nil {
			return nil, e
		}
		t.session = s
	}
	if len(o.queue) >= o.cfg.QueueCapacity {
		if o.cfg.QueuePolicy != PolicyDropLRU {
			if t.session != nil {
				t.session.reserved -= t.maxTokens
			}
			ms := max(100, o.predictStartLocked(t, len(o.queue)).Milliseconds())
			e := newError(http.StatusTooManyRequests, CodeAdmissionReject, itoa(len(o.queue))+" tasks already wait; retry later").retriableAfter(ms)
			e.PolicyLabel = "queue_full." + PolicyReject
			return nil, e
		}
		dropped = o.queue[0]
		o.queue = o.queue[1:]
		dropped.placed <- nil
	}
	t.position = o.aheadLocked(t)
	t.predicted = o.predictStartLocked(t, t.position).Milliseconds()
	o.tasks[t.id] = t
	o.queue = append(o.queue, t)
	t.appendFrame(evStarted, startedFrame{QueuePosition: t.position, PredictedStartMs: t.predicted, TaskID: t.id})
	o.metrics.admitted()
	o.pumpLocked()
	return dropped, nil
}

// dropped ends a task the drop-lru policy pushed out of the queue.
func (o *Orchestrator) dropped(t *task) {
	e := newError(http.StatusTooManyRequests, CodeQueueFullDropLRU, "dropped from the full queue for a newer task").retriableAfter(1000)
	e.PolicyLabel = "queue_full." + PolicyDropLRU
	o.metrics.droppedTask(PolicyDropLRU)
	if t.finish(evError, e, e.Code) {
		o.finished(t)
	}
}

// resolveTarget fills the task's model and pin and returns the limits it
// must fit (OC-CTRL-2013, 2014): a pin names a registered, ready pool or the
// task is refused; without one, some pool of the model must be ready.
func (o *Orchestrator) resolveTarget(t *task) (limits poolLimits, e *apiError) {
	now := time.Now()
	if id := t.req.PoolID; id != "" {
		if o.cfg.DisablePinning {
			return limits, invalidParams("pool_id: pinning is disabled on this orchestrator")
		}
		p := o.pools[id]
		if p == nil {
			return limits, invalidParams("pool_id: no pool " + id + " is registered")
		}
		if t.req.Model != "" && t.req.Model != p.reg.Model {
			return limits, invalidParams("pool_id: pool "+id+" serves model "+p.reg.Model+", not "+t.req.Model).onPool(Engine, id)
		}
		if !p.ready(now, o.cfg.PoolTimeout) {
			return limits, newError(http.StatusServiceUnavailable, CodePoolUnready, "pool "+id+" is not ready ("+o.poolState(p, now)+")").retriableAfter(1000).onPool(Engine, id)
		}
		t.pinned, t.model = id, p.reg.Model
		return poolLimits{p.reg.CtxMax, p.reg.MaxTokensOut}, nil
	}
	t.model = t.req.Model
	if t.model == "" {
		models := o.modelsLocked()
		if len(models) != 1 {
			return limits, invalidParams("model: must be set when orcd serves " + itoa(len(models)) + " models")
		}
		t.model = models[0]
	}
	known, ready := false, false
	limits = poolLimits{CtxMax: 1 << 30, MaxTokensOut: 1 << 30}
	for _, p := range o.pools {
		if p.reg.Model != t.model {
			continue
		}
		known = true
		if p.ready(now, o.cfg.PoolTimeout) {
			ready = true
			limits.CtxMax = min(limits.CtxMax, p.reg.CtxMax)
			limits.MaxTokensOut = min(limits.MaxTokensOut, p.reg.MaxTokensOut)
		}
	}
	if !known {
		return limits, invalidParams("model: no pool serves " + t.model)
	}
	if !ready {
		return limits, newError(http.StatusServiceUnavailable, CodePoolUnavailable, "no pool of model "+t.model+" is ready").retriableAfter(1000).onPool(Engine, "")
	}
	return limits, nil
}

type poolLimits struct{ CtxMax, MaxTokensOut int }

// poolState names why a pool is not ready.
func (o *Orchestrator) poolState(p *pool, now time.Time) string {
	switch {
	case !p.live(now, o.cfg.PoolTimeout):
		return "not heard from its pool manager"
	case p.draining || p.reg.Draining:
		return "draining"
	}
	return "no ready worker"
}

// modelsLocked lists the models of registered pools, sorted.
func (o *Orchestrator) modelsLocked() []string {
	var models []string
	for _, p := range o.pools {
		if !slices.Contains(models, p.reg.Model) {
			models = append(models, p.reg.Model)
		}
	}
	slices.Sort(models)
	return models
}

// eligible: the pools a task may run on.
func (o *Orchestrator) eligible(t *task, p *pool) bool {
	if t.pinned != "" {
		return p.id == t.pinned
	}
	return p.reg.Model == t.model && t.maxTokens <= p.reg.MaxTokensOut && t.maxTokens < p.reg.CtxMax
}

// place picks the worker for t: a session's worker while it is ready
// (waiting for it when it is full), else the worker with the earliest
// predicted start, its placed tasks times its pool's mean job time. Nil
// when every candidate is full or none is ready.
func (o *Orchestrator) placeLocked(t *task, now time.Time) *worker {
	if s := t.session; s != nil && s.worker != nil && s.worker.placeable() && o.pools[s.worker.pool.id] == s.worker.pool &&
		o.eligible(t, s.worker.pool) && s.worker.pool.ready(now, o.cfg.PoolTimeout) {
		if s.worker.inflight < o.capacity(s.worker) {
			return s.worker
		}
		return nil
	}
	var best *worker
	var bestStart time.Duration
	for _, p := range o.pools {
		if !o.eligible(t, p) || !p.ready(now, o.cfg.PoolTimeout) {
			continue
		}
		for _, w := range p.workers {
			if !w.placeable() || w.inflight >= o.capacity(w) {
				continue
			}
			// The tasks past its slots wait, a slot's share of a job each.
			start := time.Duration(max(0, w.inflight-w.slots()+1)) * p.meanJob() / time.Duration(w.slots())
			if best == nil || start < bestStart || start == bestStart && w.ID < best.ID {
				best, bestStart = w, start
			}
		}
	}
	return best
}

// pumpLocked places queued tasks, oldest first, on workers with room.
func (o *Orchestrator) pumpLocked() {
	now := time.Now()
	kept := o.queue[:0]
	for _, t := range o.queue {
		w := o.placeLocked(t, now)
		if w == nil {
			kept = append(kept, t)
			continue
		}
		w.inflight++
		t.placements++
		if t.session != nil {
			t.session.worker = w
		}
		t.placed <- w
	}
	clear(o.queue[len(kept):])
	o.queue = kept
}

// aheadLocked counts the queued tasks ahead of t that compete for its
// workers.
func (o *Orchestrator) aheadLocked(t *task) int {
	n := 0
	for _, q := range o.queue {
		if q.model == t.model {
			n++
		}
	}
	return n
}

// predictStartLocked estimates how long a task with ahead tasks in front
// of it waits: the work placed and queued ahead, spread over the ready
// workers of its pools, in mean job times. Zero when a worker is idle.
func (o *Orchestrator) predictStartLocked(t *task, ahead int) time.Duration {
	now := time.Now()
	workers, load := 0, ahead
	var mean time.Duration
	for _, p := range o.pools {
		if !o.eligible(t, p) || !p.ready(now, o.cfg.PoolTimeout) {
			continue
		}
		mean = max(mean, p.meanJob())
		for _, w := range p.workers {
			if w.placeable() {
				workers += w.slots()
				load += w.inflight
			}
		}
	}
	if workers == 0 || load < workers {
		return 0
	}
	return time.Duration(load/workers) * mean
}

// removeQueuedLocked takes t out of the queue and wakes its runner with
// nil; false when it was not queued.
func (o *Orchestrator) removeQueuedLocked(t *task) bool {
	i := slices.Index(o.queue, t)
	if i < 0 {
		return false
	}
	o.queue = slices.Delete(o.queue, i, i+1)
	t.placed <- nil
	return true
}

// abort ends a task with an error event: a queued task leaves the queue, a
// placed one has its relay stopped, which drops the worker connection and so
// cancels the job there.
func (o *Orchestrator) abort(t *task, e *apiError) {
	if t.finish(evError, e, e.Code) {
		o.ended(t)
	}
}

// ended cleans up after a task whose stream was ended from outside its
// relay: out of the queue, its relay stopped, its record made.
func (o *Orchestrator) ended(t *task) {
	o.mu.Lock()
	o.removeQueuedLocked(t)
	o.mu.Unlock()
	t.mu.Lock()
	stop := t.stopRelay
	t.mu.Unlock()
	if stop != nil {
		stop()
	}
	o.finished(t)
}

// runTask waits for each placement of a task and relays it; a worker that
// fails before starting the task sends it back to the head of the queue.
func (o *Orchestrator) runTask(t *task) {
	o.runPlacements(t, func(w *worker) bool { return o.relay(t, w) })
}

// runPlacements waits for each placement of t and runs it with run, which
// reports whether the task should be placed again.
func (o *Orchestrator) runPlacements(t *task, run func(*worker) bool) {
	for w := range t.placed {
		if w == nil {
			return
		}
		retry := run(w)
		o.release(w)
		if !retry {
			return
		}
		o.mu.Lock()
		exhausted := t.placements >= o.cfg.MaxPlacements
		if !exhausted {
			t.mu.Lock()
			done := t.done
			t.mu.Unlock()
			if done {
				o.mu.Unlock()
				return
			}
			o.queue = append([]*task{t}, o.queue...)
			o.pumpLocked()
		}
		o.mu.Unlock()
		if exhausted {
			o.abort(t, newError(http.StatusServiceUnavailable, CodeReplicaExhausted,
				"no worker started the task in "+itoa(t.placements)+" placements").retriableAfter(1000).onPool(Engine, w.pool.id))
			return
		}
	}
}

// release gives a worker's slot back and places what waits.
func (o *Orchestrator) release(w *worker) {
	o.mu.Lock()
	w.inflight--
	o.pumpLocked()
	o.mu.Unlock()
}

package orchestrator

import (
	"net/http"
	"net/url"
	"time"

	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// worker is one incarnation of a worker process: a restart (another pid or
// URI) is another worker, so relays to the dead one fail on their own.
type worker struct {
	poolapi.Worker
	pool     *pool
	suspect  bool // a relay could not reach it since it registered
	inflight int  // tasks placed on it and not yet finished there
}

// placeable: the pool manager says it takes jobs and no relay found it dead.
func (w *worker) placeable() bool {
	return (w.Status == poolapi.StatusReady || w.Status == poolapi.StatusBusy) && !w.suspect && w.URI != ""
}

// slots is how many jobs the worker runs at once (its /health's slots, as
// its pool manager registers them; one when not reported).
func (w *worker) slots() int { return max(1, w.Slots) }

// capacity is how many tasks orcd places on w at once: one per slot, and
// WorkerSlots−1 waiting there.
func (o *Orchestrator) capacity(w *worker) int { return w.slots() + o.cfg.WorkerSlots - 1 }

// pool is a registered pool with orcd's view of it.
type pool struct {
	id       string       // never changes
	reg      poolapi.Pool // the last registration, Workers left empty
	workers  []*worker
	lastSeen time.Time
	draining bool      // POST /v1/pools/{id}/drain
	deadline time.Time // when a drain cuts the tasks still running
	stats    poolStats
}

// poolStats feed placement's predicted start and the health snapshot.
type poolStats struct {
	tasksDone int64
	tokensOut int64
	meanJob   time.Duration // exponentially weighted, for predicted start
}

func (p *pool) live(now time.Time, timeout time.Duration) bool {
	return now.Sub(p.lastSeen) < timeout
}

// ready: live, not draining, and at least one worker takes jobs.
func (p *pool) ready(now time.Time, timeout time.Duration) bool {
	if !p.live(now, timeout) || p.draining || p.reg.Draining {
		return false
	}
	for _, w := range p.workers {
		if w.placeable() {
			return true
		}
	}
	return false
}

func (p *pool) meanJob() time.Duration {
	if p.stats.meanJob == 0 {
		return time.Second // no job finished yet: a guess, refined by the first
	}
	return p.stats.meanJob
}

func (p *pool) inflight() int {
	n := 0
	for _, w := range p.workers {
		n += w.inflight
	}
	return n
}

// handleRegister is a pool manager's PUT: the whole pool, on every change
// of a worker and as a heartbeat. The worker set is swapped in one step, so
// a reload's switch is atomic for placement.
func (o *Orchestrator) handleRegister(w http.ResponseWriter, r *http.Request) {
	var reg poolapi.Pool
	if e := decodeBody(w, r, &reg); e != nil {
		writeError(w, e)
		return
	}
	id := r.PathValue("id")
	if e := checkRegistration(id, &reg); e != nil {
		writeError(w, e)
		return
	}
	o.mu.Lock()
	p := o.pools[id]
	if p == nil {
		p = &pool{id: id}
		o.pools[id] = p
		o.log.Info("pool registered", "pool_id", id, "model", reg.Model, "workers", len(reg.Workers), "correlation_id", correlationID(r))
	}
	old := map[poolapi.Worker]*worker{}
	for _, ow := range p.workers {
		old[incarnation(ow.Worker)] = ow
	}
	workers := make([]*worker, 0, len(reg.Workers))
	for _, rw := range reg.Workers {
		nw := old[incarnation(rw)]
		switch {
		case nw == nil:
			nw = &worker{Worker: rw, pool: p}
		case nw.Status != rw.Status:
			nw.suspect = false // the pool manager has looked again
			fallthrough
		default:
			// Only these change within one incarnation; relays read the
			// identity fields without the lock.
			nw.Status, nw.Restarts, nw.Slots = rw.Status, rw.Restarts, rw.Slots
		}
		workers = append(workers, nw)
	}
	p.workers = workers
	reg.Workers = nil
	p.reg = reg
	p.lastSeen = time.Now()
	o.pumpLocked()
	o.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// incarnation identifies one process of a worker.
func incarnation(w poolapi.Worker) poolapi.Worker {
	return poolapi.Worker{ID: w.ID, URI: w.URI, PID: w.PID}
}

func checkRegistration(id string, reg *poolapi.Pool) *apiError {
	switch {
	case reg.ID != id:
		return invalidParams("pool_id " + reg.ID + " does not match the path's " + id)
	case reg.Model == "":
		return invalidParams("model: must be set")
	case reg.CtxMax < 2 || reg.MaxTokensOut < 1:
		return invalidParams("ctx_max and max_tokens_out: must be positive")
	}
	if reg.ControlURL != "" {
		if u, err := url.Parse(reg.ControlURL); err != nil || u.Host == "" {
			return invalidParams("control_url: not an absolute URL")
		}
	}
	for _, w := range reg.Workers {
		if w.ID == "" {
			return invalidParams("workers: a worker without worker_id")
		}
		if w.URI != "" {
			if u, err := url.Parse(w.URI); err != nil || u.Host == "" {
				return invalidParams("workers: " + w.ID + ": uri is not an absolute URL")
			}
		}
	}
	return nil
}

// handleDeregister withdraws a pool: its queued pinned tasks fail, its
// running tasks go on until their workers end them.
func (o *Orchestrator) handleDeregister(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	o.mu.Lock()
	_, ok := o.pools[id]
	delete(o.pools, id)
	var orphans []*task
	for _, t := range o.queue {
		if t.pinned == id {
			orphans = append(orphans, t)
		}
	}
	o.mu.Unlock()
	if !ok {
		writeError(w, newError(http.StatusNotFound, CodeNotFound, "pool "+id+" is not registered"))
		return
	}
	o.log.Info("pool withdrawn", "pool_id", id, "correlation_id", correlationID(r))
	for _, t := range orphans {
		o.abort(t, newError(http.StatusServiceUnavailable, CodePoolUnavailable, "pool "+id+" was withdrawn").retriableAfter(1000).onPool(Engine, id))
	}
	w.WriteHeader(http.StatusNoContent)
}

// markSuspect takes a worker out of placement after a relay could not reach
// it, until its pool manager reports it again.
func (o *Orchestrator) markSuspect(w *worker) {
	o.mu.Lock()
	if !w.suspect {
		w.suspect = true
		o.log.Warn("worker unreachable", "pool_id", w.pool.id, "worker_id", w.ID)
	}
	o.mu.Unlock()
}

// registration is what orcd holds of a pool as a registration, workers
// included.
func (o *Orchestrator) registration(id string) poolapi.Pool {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.pools[id]
	if p == nil {
		return poolapi.Pool{}
	}
	reg := p.reg
	for _, w := range p.workers {
		reg.Workers = append(reg.Workers, w.Worker)
	}
	return reg
}

// Package orchestrator is orcd: the control and data plane in front of the
// pool managers' workers. It admits tasks (POST /v1/tasks), queues them with
// back-pressure, places each on the ready worker of its model with the
// earliest predicted start, relays the worker's stream as server-sent
// events, and serves an OpenAI-compatible front routed by model. It reaches
// workers only over HTTP (orcrun's worker API); pool managers register
// their pools with it and run its reloads.
package orchestrator

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/llama-orch/orc/internal/version"
)

// APIVersion is the version of the public API; contracts/openapi's
// info.version and GET /v1/capabilities carry it.
const APIVersion = "1.0.0"

// Engine is what orcd reports as the engine of its pools' workers.
const Engine = "orc"

// EngineVersion is the workers' version: orcrun is built with orcc.
const EngineVersion = version.Compiler

// Queue policies: what a full queue does with a new task.
const (
	PolicyReject  = "reject"   // refuse the new task with 429
	PolicyDropLRU = "drop-lru" // drop the oldest queued task, admit the new one
)

// Config is orcd's settings; zero fields take the defaults New documents.
type Config struct {
	QueueCapacity  int           // tasks waiting for a worker, all pools together (default 256)
	QueuePolicy    string        // PolicyReject (default) or PolicyDropLRU
	QueueTimeout   time.Duration // a task waiting longer fails POOL_UNAVAILABLE (default 120 s)
	WorkerSlots    int           // tasks placed on one worker at once: its running jobs (one per slot of the worker) and WorkerSlots−1 waiting there (default 2)
	MaxPlacements  int           // placements a task may use before REPLICA_EXHAUSTED (default 3)
	DisablePinning bool          // refuse pool_id pins with INVALID_PARAMS
	PoolTimeout    time.Duration // a pool not heard from for this long is not live (default 10 s)
	TaskRetention  time.Duration // how long a finished task's stream stays readable (default 10 min)
	SessionTTL     time.Duration // an idle session is forgotten after this (default 1 h)
	// Per-session budgets, 0 for none: tokens generated (counting the
	// max_tokens of tasks still running) and decode time.
	SessionTokenBudget int
	SessionTimeBudget  time.Duration
	PoolToken          string // shared with pool managers and workers; internal calls carry it
	APIKey             string // when set, the public API needs it as a Bearer token
	ArtifactsPath      string // the artifact database file (bbolt); created when missing
	Logger             *slog.Logger
}

func (c Config) withDefaults() Config {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if c.QueueCapacity <= 0 {
		c.QueueCapacity = 256
	}
	if c.QueuePolicy == "" {
		c.QueuePolicy = PolicyReject
	}
	if c.WorkerSlots <= 0 {
		c.WorkerSlots = 2
	}
	if c.MaxPlacements <= 0 {
		c.MaxPlacements = 3
	}
	set(&c.QueueTimeout, 120*time.Second)
	set(&c.PoolTimeout, 10*time.Second)
	set(&c.TaskRetention, 10*time.Minute)
	set(&c.SessionTTL, time.Hour)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Orchestrator is orcd's state: pools, the queue, tasks and sessions.
type Orchestrator struct {
	cfg       Config
	log       *slog.Logger
	client    *http.Client // to workers and pool managers
	artifacts *artifactStore
	metrics   *metrics
	ctx       context.Context // cancelled by Close: relays end
	stop      context.CancelFunc
	wg        sync.WaitGroup

	// mu guards everything below; a task's own fields have the task's lock,
	// always taken after this one.
	mu       sync.Mutex
	pools    map[string]*pool
	queue    []*task
	tasks    map[string]*task // queued, running and recently finished
	sessions map[string]*session
	onTime   onTimeRecord
}

// New opens the artifact database and returns orcd; Close releases it.
func New(cfg Config) (*Orchestrator, error) {
	cfg = cfg.withDefaults()
	store, err := openArtifacts(cfg.ArtifactsPath)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	o := &Orchestrator{
		cfg: cfg, log: cfg.Logger, artifacts: store, ctx: ctx, stop: stop,
		client:   &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second}},
		pools:    map[string]*pool{},
		tasks:    map[string]*task{},
		sessions: map[string]*session{},
	}
	o.metrics = newMetrics(o)
	o.wg.Add(1)
	go o.janitor()
	return o, nil
}

// Close ends every relay and closes the artifact database.
func (o *Orchestrator) Close() error {
	o.stop()
	o.wg.Wait()
	return o.artifacts.close()
}

// Handler routes every endpoint.
func (o *Orchestrator) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/tasks", o.handleSubmit)
	mux.HandleFunc("GET /v1/tasks/{id}", o.handleTask)
	mux.HandleFunc("GET /v1/tasks/{id}/stream", o.handleStream)
	mux.HandleFunc("POST /v1/tasks/{id}/cancel", o.handleCancel)
	mux.HandleFunc("GET /v1/sessions/{id}", o.handleSession)
	mux.HandleFunc("DELETE /v1/sessions/{id}", o.handleDeleteSession)
	mux.HandleFunc("GET /v1/capabilities", o.handleCapabilities)
	mux.HandleFunc("GET /v1/pools/{id}/health", o.handlePoolHealth)
	mux.HandleFunc("POST /v1/pools/{id}/drain", o.handleDrain)
	mux.HandleFunc("POST /v1/pools/{id}/reload", o.handleReload)
	mux.HandleFunc("POST /v1/artifacts", o.handlePutArtifact)
	mux.HandleFunc("GET /v1/artifacts/{id}", o.handleGetArtifact)
	mux.HandleFunc("GET /v1/models", o.handleModels)
	mux.HandleFunc("POST /v1/completions", o.handleOpenAI)
	mux.HandleFunc("POST /v1/chat/completions", o.handleOpenAI)
	mux.HandleFunc("GET /metrics", o.handleMetrics)
	mux.HandleFunc("PUT /v2/internal/pools/{id}", o.handleRegister)
	mux.HandleFunc("DELETE /v2/internal/pools/{id}", o.handleDeregister)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, newError(http.StatusNotFound, CodeNotFound, r.Method+" "+r.URL.Path+" is not served"))
	})
	return withCorrelationID(withAuth(o.cfg.APIKey, o.cfg.PoolToken, mux))
}

// janitor expires pools, queued tasks past the queue timeout, finished
// tasks past their retention and idle sessions, once a second.
func (o *Orchestrator) janitor() {
	defer o.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-o.ctx.Done():
			return
		case now := <-t.C:
			o.sweep(now)
		}
	}
}

func (o *Orchestrator) sweep(now time.Time) {
	var expired []*task
	o.mu.Lock()
	for _, t := range o.queue {
		if now.Sub(t.admitted) > o.cfg.QueueTimeout {
			expired = append(expired, t)
		}
	}
	for id, t := range o.tasks {
		if end := t.endedAt(); !end.IsZero() && now.Sub(end) > o.cfg.TaskRetention {
			delete(o.tasks, id)
		}
	}
	for id, s := range o.sessions {
		if now.Sub(s.lastUsed) > o.cfg.SessionTTL && s.reserved == 0 {
			delete(o.sessions, id)
		}
	}
	o.pumpLocked()
	o.mu.Unlock()
	for _, t := range expired {
		o.abort(t, newError(http.StatusServiceUnavailable, CodePoolUnavailable,
			"no worker of model "+t.model+" took the task within the queue timeout of "+o.cfg.QueueTimeout.String()).retriableAfter(1000))
	}
}

// HTTPServer serves the handler with timeouts that make slow clients
// harmless, over HTTP/1.1 and, for clients that ask with prior knowledge,
// unencrypted HTTP/2 (OC-CTRL-2025). No write timeout: streams last as
// long as a task; each stream write has its own deadline.
func (o *Orchestrator) HTTPServer(addr string) *http.Server {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{
		Addr: addr, Handler: o.Handler(), Protocols: &p,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second,
		MaxHeaderBytes: 64 << 10,
	}
}

// Package server serves a loaded plan over HTTP: the worker API (POST
// /execute as server-sent events, POST /cancel, GET /health, GET /metrics,
// POST /shutdown), an OpenAI-compatible API (/v1/completions,
// /v1/chat/completions, /v1/models) and a websocket carrying the same events
// as /execute (GET /ws). One job runs at a time, or with a batching
// scheduler (Config.Batch) up to its slots; a bounded queue waits behind.
package server

import (
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching"
	"github.com/llama-orch/orc/tokenizer"
)

// Config is the server's settings.
type Config struct {
	WorkerID          string
	MaxTokensOut      int           // ceiling for max_tokens (≤ 2048)
	InferenceTimeout  time.Duration // per job, from start of execution
	QueueSize         int           // jobs waiting behind the running one
	ResidencyInterval time.Duration // how often weights residency is re-checked
	ShutdownGrace     time.Duration // how long the active job may finish on shutdown
	MaxBodyBytes      int64
	APIKey            string // when set, every endpoint but GET /health needs it as a Bearer token
	Limits            Limits // connections and timeouts; zero fields take defaults
	// Batch, when set, runs up to its slots jobs at once (continuous
	// batching over a paged KV cache); nil runs one job at a time on
	// sequences of the device.
	Batch  *batching.Scheduler
	Logger *slog.Logger
	// RefusalLogInterval is the least time between two log lines
	// summarising refused requests. Default 10 s.
	RefusalLogInterval time.Duration
}

// Server is the HTTP front of one device.
type Server struct {
	cfg      Config
	dev      runtime.Device
	tok      tokenizer.Tokenizer
	info     runtime.Info // cached at start: /health makes no device call
	log      *slog.Logger
	sched    *scheduler
	slots    *connSlots
	refusals *refusalLog
	metrics  *metrics
	started  time.Time

	healthy      atomic.Bool
	healthMsg    atomic.Value // string
	shutdown     chan struct{}
	shutdownOnce sync.Once
	closeOnce    sync.Once
	stopCheck    chan struct{}
	running      atomic.Int32 // jobs on the device
	kvHeld       atomic.Int64 // KV positions the running sequence holds
}

// New builds a server; Start launches its worker and residency checks.
func New(cfg Config, dev runtime.Device, tok tokenizer.Tokenizer) *Server {
	if cfg.MaxTokensOut <= 0 || cfg.MaxTokensOut > maxTokensCeiling {
		cfg.MaxTokensOut = maxTokensCeiling
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 8
	}
	if cfg.InferenceTimeout <= 0 {
		cfg.InferenceTimeout = 300 * time.Second
	}
	if cfg.ResidencyInterval <= 0 {
		cfg.ResidencyInterval = 60 * time.Second
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 30 * time.Second
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RefusalLogInterval <= 0 {
		cfg.RefusalLogInterval = 10 * time.Second
	}
	cfg.Limits = cfg.Limits.withDefaults()
	s := &Server{
		cfg: cfg, dev: dev, tok: tok, info: dev.Info(),
		log:       cfg.Logger.With("worker_id", cfg.WorkerID, "gpu_device", dev.Info().Device),
		sched:     newScheduler(cfg.QueueSize),
		slots:     newConnSlots(cfg.Limits.MaxConnections),
		started:   time.Now(),
		shutdown:  make(chan struct{}),
		stopCheck: make(chan struct{}),
	}
	s.refusals = newRefusalLog(s.log, cfg.RefusalLogInterval)
	load := func() (int, float64) {
		return int(s.running.Load()), float64(s.kvHeld.Load()) / float64(max(1, s.info.ContextLength))
	}
	var batch func() batching.Stats
	if b := cfg.Batch; b != nil {
		s.sched.slots = b.Stats().Slots
		load = func() (int, float64) {
			st := b.Stats()
			return st.Running, float64(st.KV.Used) / float64(max(1, st.KV.Blocks))
		}
		batch = b.Stats
	}
	s.metrics = newMetrics(func() int64 { return s.info.VRAMBytesUsed }, s.sched.depth, load)
	s.metrics.slots = func() (int, int) { return s.sched.slots, s.sched.inUse() }
	s.metrics.batch = batch
	s.healthy.Store(true)
	s.healthMsg.Store("")
	return s
}

// Start launches the job worker and the periodic residency check.
func (s *Server) Start() {
	if s.cfg.Batch != nil {
		go s.workBatched()
	} else {
		go s.work()
	}
	go s.checkResidency()
	s.log.Info("ready", "model", s.info.Model, "device", s.info.Device, "context_length", s.info.ContextLength)
}

// ShutdownRequested is closed by POST /shutdown or RequestShutdown.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.shutdown }

// RequestShutdown refuses new work from now on (GET /health says
// draining) and asks the owner of the server (orcrun serve) to drain and
// exit; SIGTERM does the same.
func (s *Server) RequestShutdown() {
	s.sched.drain()
	s.shutdownOnce.Do(func() { close(s.shutdown) })
}

// Drain refuses new requests, lets queued and running jobs finish within
// the grace period, cancels what remains, and stops the worker.
func (s *Server) Drain() {
	s.sched.drain()
	done := make(chan struct{})
	go func() { s.sched.idle.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.cfg.ShutdownGrace):
		s.sched.cancelAll(errShutdown)
		<-done
	}
	s.closeOnce.Do(func() { close(s.sched.queue); close(s.stopCheck) })
	s.refusals.flush()
}

func (s *Server) checkResidency() {
	t := time.NewTicker(s.cfg.ResidencyInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stopCheck:
			return
		case <-t.C:
			if err := s.dev.CheckResidency(); err != nil {
				s.healthy.Store(false)
				s.healthMsg.Store(err.Error())
				s.log.Error("error", "what", "residency check failed", "err", err.Error())
			}
		}
	}
}

// HTTPServer wraps the handler with timeouts that make slow clients
// harmless (Config.Limits); serve it on Listener.
func (s *Server) HTTPServer(addr string) *http.Server {
	l := s.cfg.Limits
	return &http.Server{
		Addr:              addr,
		Handler:           s.Handler(),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		IdleTimeout:       l.IdleTimeout,
		// No WriteTimeout: streams last as long as a job; each job has its
		// own inference timeout, each streamed event its own write deadline
		// (Limits.StreamWriteTimeout), and a vanished client cancels its job.
		MaxHeaderBytes: 64 << 10,
		ConnState:      s.slots.track,
		ConnContext:    withConn,
	}
}

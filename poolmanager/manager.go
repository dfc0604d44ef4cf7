// Package poolmanager is orcpool: it owns a host's devices for one pool,
// starts one worker (orcrun serve) per device on the pool's plan, accepts
// each worker's ready callback after validating it, health-checks the
// workers, restarts a crashed one with back-off, registers the pool with
// orcd, switches plans on orcd's reload (rolling back when the new plan's
// workers do not come up) and drains its workers on shutdown.
package poolmanager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/llama-orch/orc/internal/version"
	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// Config is the pool manager's settings; zero durations take defaults.
type Config struct {
	PoolID       string
	Plan         string   // the plan directory the workers load
	Devices      []string // one worker each: "cpu" or "cuda:N"
	Orcrun       string   // the orcrun binary
	Orchestrator string   // orcd's base URL; "" registers nowhere
	Token        string   // shared with orcd and the workers
	Host         string   // address of the control server (callbacks, reloads); workers bind it too
	MaxTokensOut int      // passed to every worker (default 2048)
	Threads      int      // CPU workers: goroutines per matmul (0: orcrun's default)
	Ctx          int      // context length per sequence (0: the model's)
	WorkerQueue  int      // jobs that may wait in a worker (0: orcrun's default)
	WorkerSlots  int      // jobs a worker runs at once, batched (orcrun serve --slots; 0: one)
	// InferenceTimeout bounds each job on a worker (0: orcrun's default).
	InferenceTimeout time.Duration

	StartTimeout   time.Duration // a worker not ready by then is killed (default 120 s)
	HealthInterval time.Duration // default 1 s; three failed checks in a row kill the worker
	Heartbeat      time.Duration // registration refresh (default 2 s)
	BackoffMin     time.Duration // first restart delay (default 250 ms), doubling per crash
	BackoffMax     time.Duration // default 30 s
	ShutdownGrace  time.Duration // a draining worker's time to finish before SIGKILL (default 30 s)
	Logger         *slog.Logger
}

func (c *Config) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&c.StartTimeout, 120*time.Second)
	set(&c.HealthInterval, time.Second)
	set(&c.Heartbeat, 2*time.Second)
	set(&c.BackoffMin, 250*time.Millisecond)
	set(&c.BackoffMax, 30*time.Second)
	set(&c.ShutdownGrace, 30*time.Second)
	if c.MaxTokensOut <= 0 {
		c.MaxTokensOut = 2048
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Manager runs one pool.
type Manager struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup

	control  string // the control server's URL
	changed  chan struct{}
	reloadMu sync.Mutex

	mu       sync.Mutex
	plan     string  // the plan serving now
	model    string  // its model name, from the first ready worker
	ctxMax   int     // its context length
	workers  []*proc // the serving generation
	starting []*proc // a reload's generation while it starts
	gen      int
	draining bool
}

// New checks the configuration; Run starts the pool.
func New(cfg Config) (*Manager, error) {
	cfg.defaults()
	switch {
	case cfg.PoolID == "":
		return nil, errors.New("--pool-id: must not be empty")
	case len(cfg.Devices) == 0:
		return nil, errors.New("no devices: give --gpus or --cpu-workers")
	case cfg.Token == "":
		return nil, errors.New("--pool-token (or ORC_POOL_TOKEN): must not be empty")
	}
	if st, err := os.Stat(cfg.Plan); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--plan %s: not a plan directory", cfg.Plan)
	}
	if _, err := os.Stat(cfg.Orcrun); err != nil {
		return nil, fmt.Errorf("orcrun binary %s: %w", cfg.Orcrun, err)
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Manager{
		cfg: cfg, log: cfg.Logger.With("pool_id", cfg.PoolID), ctx: ctx, stop: stop, plan: cfg.Plan,
		client:  &http.Client{Timeout: 10 * time.Second},
		changed: make(chan struct{}, 1),
	}, nil
}

// Run serves the control endpoint on ln, starts the workers and keeps the
// pool until ctx ends; then it drains: the pool is reported draining, every
// worker gets SIGTERM and the grace to finish, and the registration is
// withdrawn.
func (m *Manager) Run(ctx context.Context, ln net.Listener) error {
	m.control = "http://" + ln.Addr().String()
	hs := &http.Server{Handler: m.handler(), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	m.mu.Lock()
	m.workers = m.spawnGeneration(m.cfg.Plan, nil)
	m.mu.Unlock()
	m.wg.Add(1)
	go m.registrar()
	m.log.Info("pool started", "control", m.control, "plan", m.cfg.Plan, "workers", len(m.cfg.Devices))

	<-ctx.Done()
	m.log.Info("draining", "workers", len(m.workers))
	m.mu.Lock()
	m.draining = true
	procs := append([]*proc(nil), m.workers...)
	procs = append(procs, m.starting...)
	m.mu.Unlock()
	m.register()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); m.retire(p) }()
	}
	wg.Wait()
	m.stop()
	m.wg.Wait()
	m.deregister()
	m.log.Info("drained")
	return nil
}

// spawnGeneration starts one supervised worker per device on plan; first,
// when set, gets each worker's first start outcome. m.mu is held.
func (m *Manager) spawnGeneration(plan string, first chan error) []*proc {
	m.gen++
	procs := make([]*proc, len(m.cfg.Devices))
	for i, dev := range m.cfg.Devices {
		p := &proc{id: fmt.Sprintf("%s-g%d-w%d", m.cfg.PoolID, m.gen, i), device: dev, plan: plan, status: poolapi.StatusStarting, exited: make(chan struct{})}
		procs[i] = p
		m.wg.Add(1)
		go m.supervise(p, first)
	}
	return procs
}

// snapshot is the pool's registration.
func (m *Manager) snapshot() poolapi.Pool {
	m.mu.Lock()
	defer m.mu.Unlock()
	reg := poolapi.Pool{
		ID: m.cfg.PoolID, Engine: "orc", EngineVersion: version.Compiler, Model: m.model, ModelRef: m.plan,
		CtxMax: m.ctxMax, MaxTokensOut: m.cfg.MaxTokensOut, Draining: m.draining, ControlURL: m.control,
		Workers: []poolapi.Worker{},
	}
	for i, p := range m.workers {
		w := poolapi.Worker{ID: p.id, URI: p.uri, Status: p.status, Device: m.cfg.Devices[i], PID: p.pid, Restarts: p.restarts, Slots: p.slots}
		if m.draining && (w.Status == poolapi.StatusReady || w.Status == poolapi.StatusBusy) {
			w.Status = poolapi.StatusDraining
		}
		reg.Workers = append(reg.Workers, w)
	}
	return reg
}

// Status is the pool as its manager sees it, for GET /v2/internal/status.
func (m *Manager) Status() poolapi.Pool { return m.snapshot() }

// changedNow asks the registrar to push the registration.
func (m *Manager) changedNow() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

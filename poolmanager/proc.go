package poolmanager

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/llama-orch/orc/orchestrator/poolapi"
)

// proc is one worker slot: a device and a plan, and the process serving
// them now. Fields below exited are guarded by Manager.mu.
type proc struct {
	id, device, plan string
	exited           chan struct{} // closed when the supervisor has stopped for good

	status   string
	uri      string
	pid      int
	restarts int
	slots    int         // jobs it runs at once, from its /health
	retiring bool        // no more restarts
	cmd      *exec.Cmd   // the running process
	ready    chan string // the accepted callback's URI, for the supervisor
}

// args is the orcrun command line of p.
func (m *Manager) args(p *proc) []string {
	a := []string{"serve", "--plan", p.plan, "--host", m.cfg.Host, "--port", "0", "--worker-id", p.id,
		"--callback-url", m.control, "--model-ref", p.plan, "--max-tokens-out", strconv.Itoa(m.cfg.MaxTokensOut)}
	if gpu, ok := strings.CutPrefix(p.device, "cuda:"); ok {
		a = append(a, "--device", "cuda", "--gpu", gpu)
	} else {
		a = append(a, "--device", "cpu")
		if m.cfg.Threads > 0 {
			a = append(a, "--threads", strconv.Itoa(m.cfg.Threads))
		}
	}
	if m.cfg.Ctx > 0 {
		a = append(a, "--ctx", strconv.Itoa(m.cfg.Ctx))
	}
	if m.cfg.InferenceTimeout > 0 {
		a = append(a, "--inference-timeout", m.cfg.InferenceTimeout.String())
	}
	if m.cfg.WorkerQueue > 0 {
		a = append(a, "--queue", strconv.Itoa(m.cfg.WorkerQueue))
	}
	if m.cfg.WorkerSlots > 1 {
		a = append(a, "--slots", strconv.Itoa(m.cfg.WorkerSlots))
	}
	return a
}

// supervise keeps p's worker running: start, wait for its callback, watch
// its health, and after a crash restart it with doubling back-off (reset
// once a worker stayed up a minute). first, when set, gets the outcome of
// the first start, and a first start that fails is not retried.
func (m *Manager) supervise(p *proc, first chan error) {
	defer m.wg.Done()
	defer close(p.exited)
	backoff := m.cfg.BackoffMin
	for {
		up, err := m.runOnce(p, func() {
			if first != nil {
				first <- nil
				first = nil
			}
		})
		if first != nil {
			first <- err
			m.setRetiring(p)
			return
		}
		m.mu.Lock()
		done := p.retiring || m.draining
		m.mu.Unlock()
		if done || m.ctx.Err() != nil {
			return
		}
		if up > time.Minute {
			backoff = m.cfg.BackoffMin
		}
		m.log.Warn("worker exited; restarting", "worker_id", p.id, "after", backoff.String(), "err", errString(err))
		select {
		case <-time.After(backoff):
		case <-m.ctx.Done():
			return
		}
		backoff = min(2*backoff, m.cfg.BackoffMax)
		m.mu.Lock()
		p.restarts++
		m.mu.Unlock()
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (m *Manager) setRetiring(p *proc) {
	m.mu.Lock()
	p.retiring = true
	m.mu.Unlock()
}

// runOnce starts p's process and follows it until it exits, calling
// ready once the worker is. It returns how long the worker was ready and,
// when it never became ready, why.
func (m *Manager) runOnce(p *proc, ready func()) (time.Duration, error) {
	cmd := exec.Command(m.cfg.Orcrun, m.args(p)...)
	cmd.Env = append(os.Environ(), "ORC_API_KEY="+m.cfg.Token, "ORC_POOL_TOKEN="+m.cfg.Token)
	// A pool manager that dies takes its workers with it: nobody else
	// would restart, drain or route to them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	last := &lastLine{}
	cmd.Stdout, cmd.Stderr = os.Stderr, io.MultiWriter(os.Stderr, last)
	called := make(chan string, 1)
	m.mu.Lock()
	if p.retiring || m.draining {
		m.mu.Unlock()
		return 0, errors.New("retired")
	}
	p.status, p.uri, p.ready = poolapi.StatusStarting, "", called
	err := cmd.Start()
	if err == nil {
		p.cmd, p.pid = cmd, cmd.Process.Pid
	}
	m.mu.Unlock()
	if err != nil {
		m.setStatus(p, poolapi.StatusFailed)
		return 0, err
	}
	m.changedNow()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timeout := time.NewTimer(m.cfg.StartTimeout)
	defer timeout.Stop()
	select {
	case uri := <-called:
		m.log.Info("worker ready", "worker_id", p.id, "uri", uri, "pid", cmd.Process.Pid)
		ready()
	case err := <-exited:
		m.setStatus(p, poolapi.StatusFailed)
		return 0, fmt.Errorf("worker %s exited before it was ready (%v): %s", p.id, err, last.String())
	case <-timeout.C:
		cmd.Process.Kill()
		<-exited
		m.setStatus(p, poolapi.StatusFailed)
		return 0, fmt.Errorf("worker %s not ready within %s", p.id, m.cfg.StartTimeout)
	}
	upSince := time.Now()
	m.watch(p, cmd, exited)
	m.setStatus(p, poolapi.StatusFailed)
	return time.Since(upSince), nil
}

// watch health-checks a ready worker until its process exits; three failed
// checks in a row kill it, so the supervisor restarts it.
func (m *Manager) watch(p *proc, cmd *exec.Cmd, exited chan error) {
	tick := time.NewTicker(m.cfg.HealthInterval)
	defer tick.Stop()
	fails := 0
	for {
		select {
		case err := <-exited:
			m.log.Warn("worker exited", "worker_id", p.id, "pid", cmd.Process.Pid, "err", errString(err))
			return
		case <-tick.C:
			status, err := m.health(p)
			if status != "" {
				m.setStatus(p, status)
			}
			if err != nil {
				fails++
				m.log.Warn("health check failed", "worker_id", p.id, "fails", fails, "err", err.Error())
				if fails >= 3 {
					cmd.Process.Kill()
				}
				continue
			}
			fails = 0
		}
	}
}

// workerHealth is what the pool manager reads of a worker's GET /health.
type workerHealth struct {
	Status        string `json:"status"`
	Model         string `json:"model"`
	ContextLength int    `json:"context_length"`
	Slots         int    `json:"slots"`
}

// health asks a worker for its status. A worker answers 200 while it takes
// work (ready, busy) and 503 once it does not: draining is no failure (it
// finishes its job, and no new work is placed on it), failed is one.
func (m *Manager) health(p *proc) (string, error) {
	m.mu.Lock()
	uri := p.uri
	m.mu.Unlock()
	h, err := m.fetchHealth(uri)
	switch {
	case h != nil && h.Status == poolapi.StatusDraining:
		return poolapi.StatusDraining, nil
	case h != nil && h.Status == poolapi.StatusFailed:
		return poolapi.StatusFailed, err
	case err != nil:
		return "", err
	case h.Status == poolapi.StatusReady || h.Status == poolapi.StatusBusy:
		return h.Status, nil
	}
	return "", fmt.Errorf("status %q", h.Status)
}

// fetchHealth reads a worker's GET /health; an answer other than 200 is an
// error, returned with the body's status when it had one.
func (m *Manager) fetchHealth(uri string) (*workerHealth, error) {
	resp, err := m.client.Get(uri + "/health")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var h workerHealth
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return nil, fmt.Errorf("GET /health: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return &h, fmt.Errorf("GET /health: %s, status %q", resp.Status, h.Status)
	}
	return &h, nil
}

// setStatus records p's status and pushes the registration when it changed.
func (m *Manager) setStatus(p *proc, status string) {
	m.mu.Lock()
	changed := p.status != status
	p.status = status
	m.mu.Unlock()
	if changed {
		m.changedNow()
	}
}

// retire stops p for good: SIGTERM, the shutdown grace to finish its job,
// then SIGKILL.
func (m *Manager) retire(p *proc) {
	m.mu.Lock()
	p.retiring = true
	cmd := p.cmd
	m.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.exited:
	case <-time.After(m.cfg.ShutdownGrace + 5*time.Second):
		if cmd != nil && cmd.Process != nil {
			cmd.Process.Kill()
		}
		<-p.exited
	}
}

// lastLine keeps the last complete line written to it: a worker's last
// words, which say why it could not start.
type lastLine struct {
	mu          sync.Mutex
	line, build []byte
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range p {
		if c == '\n' {
			if len(l.build) > 0 {
				l.line = append(l.line[:0], l.build...)
			}
			l.build = l.build[:0]
		} else if len(l.build) < 1024 {
			l.build = append(l.build, c)
		}
	}
	return len(p), nil
}

func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.line)
}

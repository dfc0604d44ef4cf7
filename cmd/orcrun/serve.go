package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/internal/netsafe"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching"
	"github.com/llama-orch/orc/server"
)

type serveCmd struct {
	deviceFlags
	Host              string        `default:"127.0.0.1" help:"Address to bind; anything but loopback needs --api-key or --insecure."`
	Port              int           `default:"8080" help:"Port to listen on."`
	WorkerID          string        `help:"Worker id reported in logs and /health (default: a random UUID)."`
	MaxTokensOut      int           `default:"2048" help:"Ceiling for a request's max_tokens (at most 2048)."`
	InferenceTimeout  time.Duration `default:"300s" help:"A job running longer ends with INFERENCE_TIMEOUT."`
	Queue             int           `default:"8" help:"Jobs that may wait behind the running ones; past that, 429."`
	Slots             int           `default:"1" help:"Jobs run at once, batched in each step over a paged KV cache (1: one at a time)."`
	PrefillChunk      int           `help:"With --slots above 1: prompt tokens one step takes beside the running jobs' tokens (default: the plan's max_tokens)."`
	KVBytes           int64         `name:"kv-bytes" help:"With --slots above 1: the KV cache pool in bytes (default: the CPU, --slots full contexts; a GPU, the memory left after weights and activations less a margin)."`
	ResidencyInterval time.Duration `default:"60s" help:"How often weights residency is re-checked."`
	ShutdownGrace     time.Duration `default:"30s" help:"How long the active job may finish on shutdown."`
	MaxConnections    int           `default:"64" help:"Connections open at once; further clients wait until one closes."`
	APIKey            string        `env:"ORC_API_KEY" help:"Require this Bearer token, best given by the variable or --api-key-file (other local users can read a flag in /proc/PID/cmdline)"`
	APIKeyFile        string        `help:"Require the Bearer token held in this file (its first line)."`
	Insecure          bool          `help:"Allow binding a non-loopback address without an API key."`
	CallbackURL       string        `help:"Pool manager to tell once serving: POST {url}/v2/internal/workers/ready (orcpool sets it)."`
	ModelRef          string        `help:"Model reference reported in the ready callback (default: --plan)."`
	PoolToken         string        `env:"ORC_POOL_TOKEN" help:"Bearer token of the ready callback (ORC_POOL_TOKEN)."`
}

func (c *serveCmd) Run() error {
	base := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if c.WorkerID == "" {
		c.WorkerID = netsafe.UUID()
	}
	log := base.With("worker_id", c.WorkerID)
	key, err := c.apiKey(log)
	if err != nil {
		return err
	}
	c.APIKey = key
	if err := netsafe.CheckBind(c.Host, c.APIKey, c.Insecure, "an API key (ORC_API_KEY or --api-key-file)"); err != nil {
		return err
	}
	if c.MaxConnections < 1 {
		return fmt.Errorf("--max-connections %d: must be at least 1", c.MaxConnections)
	}
	log.Info("startup", "plan", c.Plan, "device", c.deviceName(), "host", c.Host, "port", c.Port)
	// The port is taken before the model loads: a busy port fails at once,
	// not after the weights are uploaded.
	addr := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--port %d: %w", c.Port, err)
	}
	defer ln.Close()

	p, err := plans.Open(c.Plan, plans.OpenOptions{DeferWeightHash: true})
	if err != nil {
		return err
	}
	// Refused before the weights load: the check is on the plan.
	if c.Slots > 1 {
		if err := batchable(c.deviceKind(p.Manifest.Target), p); err != nil {
			p.Close()
			return fmt.Errorf("--slots %d: %w", c.Slots, err)
		}
	}
	log.Info("model_load_start", "model", p.Manifest.Model.Name, "weight_bytes", p.Manifest.Memory.WeightBytes)
	start := time.Now()
	dev, tok, err := openWithTokenizer(p, func() (runtime.Device, error) {
		return c.open(p, func(pct int) { log.Info("model_load_progress", "percent", pct) })
	})
	if err != nil {
		p.Close()
		log.Error("error", "what", "model load failed", "err", err.Error())
		return err
	}
	info := dev.Info()
	log.Info("model_load_complete", "model", info.Model, "gpu_device", info.Device, "vram_bytes", info.VRAMBytesUsed, "ms", time.Since(start).Milliseconds())
	batch, err := c.batching(dev)
	if err != nil {
		dev.Close()
		return err
	}
	if batch != nil {
		st := batch.Stats()
		log.Info("batching", "slots", st.Slots, "kv_blocks", st.KV.Blocks, "kv_bytes", st.KVBytes)
	}

	srv := server.New(server.Config{
		WorkerID: c.WorkerID, MaxTokensOut: c.MaxTokensOut, InferenceTimeout: c.InferenceTimeout,
		QueueSize: c.Queue, ResidencyInterval: c.ResidencyInterval, ShutdownGrace: c.ShutdownGrace,
		APIKey: c.APIKey, Logger: base, Limits: server.Limits{MaxConnections: c.MaxConnections}, Batch: batch,
	}, dev, tok)
	// The batch's KV pool goes before the device that holds it.
	closeDevice := func() error {
		if batch != nil {
			batch.Close()
		}
		return dev.Close()
	}
	hs := srv.HTTPServer(addr)
	srv.Start()
	// From here a signal drains the server (before, it ends the load); it
	// is caught before the line below says the server is up.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	fmt.Printf("listening on http://%s (%s, %s)\n", ln.Addr(), info.Model, info.Device)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(srv.Listener(ln)) }()
	if c.CallbackURL != "" {
		// Server first, then the callback: the pool manager checks the
		// worker answers at the URI it reports.
		if err := c.callBack(info.VRAMBytesUsed, "http://"+ln.Addr().String()); err != nil {
			log.Error("error", "what", "ready callback failed", "err", err.Error())
			srv.Drain()
			hs.Close()
			closeDevice()
			return err
		}
		log.Info("ready", "uri", "http://"+ln.Addr().String())
	}

	select {
	case s := <-sig:
		log.Info("shutdown", "source", s.String())
	case <-srv.ShutdownRequested():
	case err := <-served:
		closeDevice()
		return err
	}
	// New requests get 503 while the active job finishes; then the
	// listener closes, VRAM is freed and the process exits 0.
	srv.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown", "err", err.Error())
	}
	if err := closeDevice(); err != nil {
		return err
	}
	log.Info("shutdown", "state", "complete")
	return nil
}

// Validate refuses a port no socket has, before anything is loaded.
func (c *serveCmd) Validate() error {
	if err := c.deviceFlags.Validate(); err != nil {
		return err
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("--port %d is outside [0, 65535] (0 picks a free port)", c.Port)
	}
	switch {
	case c.Slots < 1:
		return fmt.Errorf("--slots %d: must be at least 1", c.Slots)
	case c.PrefillChunk < 0 || c.KVBytes < 0:
		return fmt.Errorf("--prefill-chunk %d, --kv-bytes %d: must not be negative", c.PrefillChunk, c.KVBytes)
	case c.Slots == 1 && (c.PrefillChunk != 0 || c.KVBytes != 0):
		return errors.New("--prefill-chunk and --kv-bytes size batching: give them with --slots above 1")
	}
	return nil
}

// batching makes the batching scheduler of --slots above 1 (nil for 1):
// prefill chunks and the slots within the plan's step (its max_tokens).
func (c *serveCmd) batching(dev runtime.Device) (*batching.Scheduler, error) {
	return newScheduler(dev, c.Slots, c.PrefillChunk, c.KVBytes)
}

// newScheduler is the batching scheduler of slots above 1 (nil for 1) on
// dev: chunk prompt tokens a step (0: the plan's max_tokens), a KV pool of
// kvBytes (0: the device's default).
func newScheduler(dev runtime.Device, slots, chunk int, kvBytes int64) (*batching.Scheduler, error) {
	if slots == 1 {
		return nil, nil
	}
	info := dev.Info()
	if chunk == 0 {
		chunk = info.MaxTokens
	}
	if chunk > info.MaxTokens || slots > info.MaxTokens {
		return nil, fmt.Errorf("--slots %d, --prefill-chunk %d: a step holds at most the plan's max_tokens, %d tokens (orcc compile --max-tokens)", slots, chunk, info.MaxTokens)
	}
	bd, ok := dev.(runtime.BatchDevice)
	if !ok {
		return nil, fmt.Errorf("--slots %d: the %s device does not run batched steps yet; serve with --slots 1", slots, info.Device)
	}
	b, err := batching.New(bd, batching.Config{Slots: slots, PrefillChunk: chunk, KVBytes: kvBytes})
	if err != nil {
		return nil, fmt.Errorf("--slots %d, --kv-bytes %d: %w", slots, kvBytes, err)
	}
	return b, nil
}

// apiKey is the key from the one place it was given: ORC_API_KEY,
// --api-key-file or --api-key (kong fills APIKey from the variable when the
// flag is absent). The flag works but is warned about, as is a key file
// that other users may read.
func (c *serveCmd) apiKey(log *slog.Logger) (string, error) {
	env := os.Getenv("ORC_API_KEY")
	fromFlag := c.APIKey != "" && c.APIKey != env
	given := 0
	for _, g := range []bool{env != "", fromFlag, c.APIKeyFile != ""} {
		if g {
			given++
		}
	}
	if given > 1 {
		return "", errors.New("the API key is given more than one way (ORC_API_KEY, --api-key-file, --api-key): give one")
	}
	switch {
	case fromFlag:
		log.Warn("warning", "what", "--api-key is readable by other local users in /proc/PID/cmdline; use ORC_API_KEY or --api-key-file")
	case c.APIKeyFile != "":
		b, err := os.ReadFile(c.APIKeyFile)
		if err != nil {
			return "", fmt.Errorf("--api-key-file: %w", err)
		}
		key, _, _ := strings.Cut(string(b), "\n")
		key = strings.TrimSpace(key)
		if key == "" {
			return "", fmt.Errorf("--api-key-file %s: the first line is empty", c.APIKeyFile)
		}
		if fi, err := os.Stat(c.APIKeyFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			log.Warn("warning", "what", fmt.Sprintf("--api-key-file %s is readable by other users (mode %v); chmod 600 it", c.APIKeyFile, fi.Mode().Perm()))
		}
		return key, nil
	}
	return c.APIKey, nil
}

func init() {
	commands.Add(cli.Command{Name: "serve", Help: "Serve a plan over HTTP (worker API, OpenAI-compatible API, websocket).", Cmd: &serveCmd{}, Default: true})
}

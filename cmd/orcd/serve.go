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
	"syscall"
	"time"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/internal/netsafe"
	"github.com/llama-orch/orc/orchestrator"
)

type serveCmd struct {
	Host               string        `default:"127.0.0.1" help:"Address to bind; anything but loopback needs --api-key or --insecure."`
	Port               int           `default:"8090" help:"Port to listen on (0: any free port, printed at start)."`
	APIKey             string        `env:"ORC_API_KEY" help:"Require this Bearer token on the public API (also from ORC_API_KEY)."`
	Insecure           bool          `help:"Allow binding a non-loopback address without an API key."`
	PoolToken          string        `env:"ORC_POOL_TOKEN" required:"" help:"Token shared with orcpool and its workers (ORC_POOL_TOKEN)."`
	Artifacts          string        `default:"orcd.db" help:"Artifact database file (bbolt); created when missing."`
	Queue              int           `default:"256" help:"Tasks that may wait for a worker; past that, the queue policy."`
	QueuePolicy        string        `enum:"reject,drop-lru" default:"reject" help:"Full queue: reject the new task (429) or drop the oldest queued one."`
	QueueTimeout       time.Duration `default:"120s" help:"A task waiting longer fails POOL_UNAVAILABLE."`
	WorkerSlots        int           `default:"2" help:"Tasks placed on one worker at once (its running job and the ones waiting there)."`
	MaxPlacements      int           `default:"3" help:"Placements a task may use when workers fail before starting it."`
	NoPinning          bool          `help:"Refuse pool_id pins."`
	PoolTimeout        time.Duration `default:"10s" help:"A pool whose manager is silent this long is not live."`
	SessionTokenBudget int           `help:"Tokens a session may generate (0: no budget)."`
	SessionTimeBudget  time.Duration `help:"Decode time a session may use (0: no budget)."`
}

func (c *serveCmd) Run() error {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("component", "orcd")
	if err := netsafe.CheckBind(c.Host, c.APIKey, c.Insecure, "--api-key (or ORC_API_KEY)"); err != nil {
		return err
	}
	if c.PoolToken == "" {
		return fmt.Errorf("--pool-token (or ORC_POOL_TOKEN): must not be empty")
	}
	o, err := orchestrator.New(orchestrator.Config{
		QueueCapacity: c.Queue, QueuePolicy: c.QueuePolicy, QueueTimeout: c.QueueTimeout, WorkerSlots: c.WorkerSlots,
		MaxPlacements: c.MaxPlacements, DisablePinning: c.NoPinning, PoolTimeout: c.PoolTimeout,
		SessionTokenBudget: c.SessionTokenBudget, SessionTimeBudget: c.SessionTimeBudget,
		PoolToken: c.PoolToken, APIKey: c.APIKey, ArtifactsPath: c.Artifacts, Logger: log,
	})
	if err != nil {
		return err
	}
	defer o.Close()
	ln, err := net.Listen("tcp", net.JoinHostPort(c.Host, strconv.Itoa(c.Port)))
	if err != nil {
		return err
	}
	hs := o.HTTPServer(ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("listening", "url", "http://"+ln.Addr().String(), "artifacts", c.Artifacts)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case s := <-sig:
		log.Info("shutdown", "source", s.String())
	case err := <-served:
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		hs.Close() // open streams: cut them
	}
	return nil
}

func init() {
	commands.Add(cli.Command{Name: "serve", Help: "Serve the orchestrator API (the default command).", Cmd: &serveCmd{}, Default: true})
}

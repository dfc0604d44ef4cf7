// Command orcpool is the pool manager of one host: it starts one orcrun
// worker per device on a plan, watches and restarts them, and registers the
// pool with orcd. See README, "Serving many GPUs".
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/llama-orch/orc/internal/netsafe"
	"github.com/llama-orch/orc/poolmanager"
)

type cmd struct {
	PoolID           string        `default:"default" help:"Pool id orcd routes and pins by."`
	Plan             string        `required:"" type:"existingdir" help:"Plan directory the workers load (from orcc compile)."`
	GPUs             string        `name:"gpus" help:"GPUs to own, one worker each: e.g. 0,1."`
	CPUWorkers       int           `help:"CPU reference-device workers instead of GPUs."`
	Orchestrator     string        `help:"orcd's URL to register the pool with, e.g. http://127.0.0.1:8090."`
	PoolToken        string        `env:"ORC_POOL_TOKEN" required:"" help:"Token shared with orcd and the workers (ORC_POOL_TOKEN)."`
	Host             string        `default:"127.0.0.1" help:"Address of the control endpoint and of the workers; anything but loopback needs --insecure (the pool token guards the calls)."`
	Port             int           `default:"0" help:"Control endpoint port (0: any free port)."`
	Insecure         bool          `help:"Allow a non-loopback --host."`
	Orcrun           string        `help:"orcrun binary (default: the one beside orcpool, else on PATH)."`
	MaxTokensOut     int           `default:"2048" help:"Ceiling for a request's max_tokens, passed to every worker."`
	Threads          int           `help:"CPU workers: goroutines per matmul."`
	Ctx              int           `help:"Context length a sequence may reach (default: the model's)."`
	WorkerQueue      int           `help:"Jobs that may wait inside one worker (default: orcrun's)."`
	Slots            int           `help:"Jobs each worker runs at once, batched in each step (orcrun serve --slots; default 1)."`
	InferenceTimeout time.Duration `help:"A job running longer on a worker ends DECODE_TIMEOUT (default: orcrun's)."`
	StartTimeout     time.Duration `default:"120s" help:"A worker not ready by then is killed and restarted."`
	ShutdownGrace    time.Duration `default:"30s" help:"On SIGTERM, how long workers may finish their jobs."`
}

func (c *cmd) Run() error {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("component", "orcpool")
	if err := netsafe.CheckBind(c.Host, "", c.Insecure, "--insecure with a firewall"); err != nil {
		return err
	}
	devices, err := c.devices()
	if err != nil {
		return err
	}
	orcrun, err := c.orcrunPath()
	if err != nil {
		return err
	}
	m, err := poolmanager.New(poolmanager.Config{
		PoolID: c.PoolID, Plan: c.Plan, Devices: devices, Orcrun: orcrun, Orchestrator: c.Orchestrator,
		Token: c.PoolToken, Host: c.Host, MaxTokensOut: c.MaxTokensOut, Threads: c.Threads, Ctx: c.Ctx,
		WorkerQueue: c.WorkerQueue, WorkerSlots: c.Slots, InferenceTimeout: c.InferenceTimeout, StartTimeout: c.StartTimeout, ShutdownGrace: c.ShutdownGrace, Logger: log,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(c.Host, strconv.Itoa(c.Port)))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return m.Run(ctx, ln)
}

// devices turns --gpus or --cpu-workers into one device per worker.
func (c *cmd) devices() ([]string, error) {
	if (c.GPUs == "") == (c.CPUWorkers == 0) {
		return nil, fmt.Errorf("give exactly one of --gpus (e.g. 0,1) and --cpu-workers N")
	}
	if c.CPUWorkers < 0 {
		return nil, fmt.Errorf("--cpu-workers %d: must be positive", c.CPUWorkers)
	}
	var devs []string
	for range c.CPUWorkers {
		devs = append(devs, "cpu")
	}
	if c.GPUs != "" {
		seen := map[int]bool{}
		for _, f := range strings.Split(c.GPUs, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 || seen[n] {
				return nil, fmt.Errorf("--gpus %q: want distinct GPU numbers separated by commas, e.g. 0,1", c.GPUs)
			}
			seen[n] = true
			devs = append(devs, "cuda:"+strconv.Itoa(n))
		}
	}
	return devs, nil
}

func (c *cmd) orcrunPath() (string, error) {
	if c.Orcrun != "" {
		return c.Orcrun, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "orcrun")
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	p, err := exec.LookPath("orcrun")
	if err != nil {
		return "", fmt.Errorf("orcrun not found beside orcpool or on PATH: give --orcrun")
	}
	return p, nil
}

func main() {
	var c cmd
	ctx := kong.Parse(&c, kong.Name("orcpool"), kong.Description("The pool manager: one orcrun worker per device, registered with orcd."), kong.UsageOnError())
	if err := ctx.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "orcpool: %v\n", err)
		os.Exit(1)
	}
}

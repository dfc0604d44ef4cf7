package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/internal/soak"
)

type soakCmd struct {
	URL            string        `required:"" help:"Base URL of a running orcrun serve, e.g. http://127.0.0.1:8080."`
	Requests       int           `default:"1000" help:"/execute requests, sequential or shared by --clients (with --duration: the length of the repeated mix)."`
	Cancel         int           `default:"200" help:"Of them, cancelled through POST /cancel after the first token."`
	Disconnect     int           `default:"200" help:"Of them, dropped by closing the connection after the first token."`
	Clients        int           `default:"1" help:"Concurrent clients sending back to back, --requests between them or for --duration; 429s are expected."`
	Duration       time.Duration `help:"Run a load for this long instead of --requests sequential requests."`
	ShutdownAfter  time.Duration `help:"Under load, POST /shutdown this far into the run and check the drain (the server exits)."`
	MaxTokens      int           `default:"64" help:"max_tokens of each request."`
	Prompt         string        `default:"Once upon a time" help:"Prompt of each request."`
	Seed           uint64        `default:"1" help:"Chooses which requests are cancelled or dropped, and the sampling seeds."`
	RequestTimeout time.Duration `default:"60s" help:"Longest a request may take before it counts as a violation."`
	APIKey         string        `env:"ORC_API_KEY" help:"Bearer token for a server started with --api-key."`
	JSON           bool          `help:"Print the report as JSON."`
}

func (c *soakCmd) Run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o := soak.Options{
		URL: c.URL, Requests: c.Requests, Cancel: c.Cancel, Disconnect: c.Disconnect, MaxTokens: c.MaxTokens,
		Prompt: c.Prompt, Seed: c.Seed, RequestTimeout: c.RequestTimeout, APIKey: c.APIKey,
		Clients: c.Clients, Duration: c.Duration, ShutdownAfter: c.ShutdownAfter,
	}
	if !c.JSON {
		o.Progress = func(done int) {
			switch {
			case c.Duration > 0 && done%10000 == 0:
				fmt.Fprintf(os.Stderr, "soak: %d requests\n", done)
			case c.Duration == 0 && (done%100 == 0 || done == c.Requests):
				fmt.Fprintf(os.Stderr, "soak: %d/%d\n", done, c.Requests)
			}
		}
	}
	rep, err := soak.Run(ctx, o)
	if err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		rep.WriteText(os.Stdout)
	}
	if rep.Violations > 0 {
		return fmt.Errorf("soak: %d of %d requests did not end as expected", rep.Violations, rep.Requests)
	}
	return nil
}

func init() {
	commands.Add(cli.Command{Name: "soak", Help: "Drive a running server with sequential requests, cancels and dropped connections; report stability.", Cmd: &soakCmd{}, Hidden: true})
}

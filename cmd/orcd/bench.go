package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/orchestrator/loadgen"
)

type benchCmd struct {
	URL         string `required:"" help:"orcd's URL, e.g. http://127.0.0.1:8090."`
	Direct      string `help:"A worker's URL (orcrun serve) to compare with, reached without orcd."`
	Model       string `required:"" help:"Model to route by (GET /v1/models lists them)."`
	Clients     int    `default:"64" help:"Concurrent streaming clients."`
	Requests    int    `default:"512" help:"Requests per throughput run."`
	MaxTokens   int    `default:"128" help:"max_tokens of each request."`
	Prompt      string `default:"Once upon a time" help:"Prompt of each request."`
	LatencyRuns int    `default:"64" help:"Sequential single-client requests, to orcd and to the worker alternately, for time to first token and inter-token gaps."`
	APIKey      string `env:"ORC_API_KEY" help:"Bearer key of orcd's public API."`
	WorkerKey   string `env:"ORC_POOL_TOKEN" help:"Bearer key of the direct worker (orcpool starts workers with the pool token)."`
	JSON        bool   `help:"Print the results as JSON."`
}

func (c *benchCmd) Run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	orcd := loadgen.Target{URL: c.URL, Orcd: true, Model: c.Model, APIKey: c.APIKey}
	direct := loadgen.Target{URL: c.Direct, APIKey: c.WorkerKey}
	req := loadgen.Request{Prompt: c.Prompt, MaxTokens: c.MaxTokens, Seed: 1}
	out := map[string]*loadgen.Result{}
	out["orcd"] = loadgen.Run(ctx, orcd, req, c.Clients, c.Requests)
	if c.Direct != "" {
		out["direct"] = loadgen.Run(ctx, direct, req, c.Clients, c.Requests)
		out["orcd_latency"], out["direct_latency"] = loadgen.Latency(ctx, orcd, direct, req, c.LatencyRuns)
	}
	if c.JSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Printf("%-15s %8s %8s %6s %10s %12s %10s %10s %14s\n", "run", "clients", "requests", "failed", "tokens", "tok/s", "ttft p50", "ttft p99", "gap p50")
	for _, k := range []string{"orcd", "direct", "orcd_latency", "direct_latency"} {
		r, ok := out[k]
		if !ok {
			continue
		}
		fmt.Printf("%-15s %8d %8d %6d %10d %12.1f %8.3fms %8.3fms %12.1fµs\n", k, r.Clients, r.Requests, r.Failed, r.Tokens, r.TokensPerSec, r.TTFTMedianMs, r.TTFTP99Ms, r.GapMedianUs)
		if r.FirstFailure != "" {
			fmt.Printf("  first failure: %s\n", r.FirstFailure)
		}
	}
	if d, ok := out["direct"]; ok {
		ol, dl := out["orcd_latency"], out["direct_latency"]
		fmt.Printf("\naggregate: orcd %.2f× one worker direct; orcd adds %.3f ms to the median TTFT and %.1f µs to the median inter-token gap\n",
			out["orcd"].TokensPerSec/d.TokensPerSec, ol.TTFTMedianMs-dl.TTFTMedianMs, ol.GapMedianUs-dl.GapMedianUs)
	}
	return nil
}

func init() {
	commands.Add(cli.Command{Name: "bench", Help: "Drive orcd (and a worker directly) with concurrent streaming clients: tokens/s, TTFT, inter-token gaps.", Cmd: &benchCmd{}})
}

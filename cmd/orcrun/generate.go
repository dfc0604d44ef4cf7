package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
	"github.com/llama-orch/orc/tokenizer"
)

type generateCmd struct {
	deviceFlags
	Prompt        string  `required:"" help:"Prompt text; special tokens written in it are parsed."`
	MaxTokens     int     `default:"128" help:"Tokens to generate at most."`
	Temperature   float32 `default:"0" help:"Sampling temperature, 0 (greedy) to 2."`
	TopK          int     `default:"0" help:"Keep the k most likely tokens (0 = off)."`
	TopP          float32 `default:"1" help:"Nucleus sampling mass (1 = off)."`
	MinP          float32 `default:"0" help:"Drop tokens below min-p times the best one's probability (0 = off)."`
	RepeatPenalty float32 `default:"1" help:"Repetition penalty over the last 64 tokens (1 = off)."`
	Seed          uint64  `default:"0" help:"Sampling seed."`
	JSON          bool    `help:"Print {\"ids\":[...],\"text\":\"...\"} (generated ids only) instead of streaming text."`
}

func (c *generateCmd) Run() error {
	p, err := plans.Open(c.Plan, plans.OpenOptions{})
	if err != nil {
		return err
	}
	defer p.Close()
	tok, err := tokenizer.Load(p.Manifest.Tokenizer)
	if err != nil {
		return fmt.Errorf("plan %s: %w", c.Plan, err)
	}
	prompt := tokenizer.EncodePrompt(tok, c.Prompt)
	if len(prompt) == 0 {
		return fmt.Errorf("the prompt is empty")
	}

	dev, err := c.open(p, nil)
	if err != nil {
		return err
	}
	defer dev.Close()
	info := dev.Info()
	seq, err := dev.NewSequence(min(len(prompt)+c.MaxTokens, info.ContextLength))
	if err != nil {
		return err
	}
	defer seq.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	stream := tok.NewStream()
	res, err := runtime.Generate(ctx, seq, prompt, runtime.GenerateParams{
		Sampling: sample.Params{
			Temperature: c.Temperature, TopK: c.TopK, TopP: c.TopP, MinP: c.MinP,
			RepetitionPenalty: c.RepeatPenalty, Seed: c.Seed,
		},
		MaxTokens:    c.MaxTokens,
		StopTokens:   tok.Info().StopIDs,
		PrefillChunk: info.MaxTokens,
	}, func(id int32) bool {
		if !c.JSON {
			fmt.Print(stream.Add(id))
		}
		return true
	})
	if err != nil {
		return err
	}
	if c.JSON {
		ids := res.Tokens
		if ids == nil {
			ids = []int32{}
		}
		out, err := json.Marshal(struct {
			IDs  []int32 `json:"ids"`
			Text string  `json:"text"`
		}{ids, tok.Decode(res.Tokens)})
		if err != nil {
			return err
		}
		fmt.Println(string(out))
	} else {
		fmt.Println(stream.Flush())
	}
	fmt.Fprintf(os.Stderr, "%s on %s: prompt %d tokens in %v (%.1f tok/s), %d generated in %v (%.2f tok/s), stop: %s\n",
		info.Model, info.DeviceName, len(prompt), res.PrefillDuration.Round(1e5), rate(len(prompt), res.PrefillDuration.Seconds()),
		len(res.Tokens), res.DecodeDuration.Round(1e5), rate(len(res.Tokens)-1, res.DecodeDuration.Seconds()), res.StopReason)
	return nil
}

// rate is n per seconds, 0 when nothing was timed. Decode produces its
// first token from the prefill's logits, so it times len−1 steps.
func rate(n int, seconds float64) float64 {
	if n <= 0 || seconds <= 0 {
		return 0
	}
	return float64(n) / seconds
}

func init() {
	commands.Add(cli.Command{Name: "generate", Help: "Generate text from a prompt with a plan.", Cmd: &generateCmd{}})
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"strings"

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
	Temperature   float64 `default:"0" help:"Sampling temperature, 0 (greedy) to 2."`
	TopK          int     `default:"0" help:"Keep the k most likely tokens (0 = off)."`
	TopP          float64 `default:"1" help:"Nucleus sampling mass, 0 to 1 (1 = off)."`
	MinP          float64 `default:"0" help:"Drop tokens below min-p times the best one's probability, 0 to 1 (0 = off)."`
	RepeatPenalty float64 `default:"1" help:"Repetition penalty over the last 64 tokens (1 = off)."`
	Seed          uint64  `default:"0" help:"Sampling seed."`
	JSON          bool    `help:"Print {\"ids\":[...],\"text\":\"...\"} (generated ids only) instead of streaming text."`
}

// Validate refuses nonsense before the plan is read.
func (c *generateCmd) Validate() error {
	if err := c.deviceFlags.Validate(); err != nil {
		return err
	}
	if err := runtime.CheckMaxTokens(c.MaxTokens); err != nil {
		return flagError(err)
	}
	_, err := c.sampling()
	return err
}

// sampling is the flags' sampling settings, checked. The flags parse as
// float64 so that any number reads and one out of range is named as such.
func (c *generateCmd) sampling() (sample.Params, error) {
	for _, f := range []struct {
		flag string
		v    float64
	}{{"--temperature", c.Temperature}, {"--top-p", c.TopP}, {"--min-p", c.MinP}, {"--repeat-penalty", c.RepeatPenalty}} {
		if math.Abs(f.v) > math.MaxFloat32 {
			return sample.Params{}, fmt.Errorf("%s %g is out of range", f.flag, f.v)
		}
	}
	p := sample.Params{
		Temperature: float32(c.Temperature), TopK: c.TopK, TopP: float32(c.TopP), MinP: float32(c.MinP),
		RepetitionPenalty: float32(c.RepeatPenalty), Seed: c.Seed,
	}
	return p, p.Validate()
}

func (c *generateCmd) Run() error {
	if err := c.Validate(); err != nil {
		return err
	}
	sampling, _ := c.sampling()
	p, err := plans.Open(c.Plan, plans.OpenOptions{DeferWeightHash: true})
	if err != nil {
		return err
	}
	defer p.Close()
	tok, err := tokenizer.Load(p.Manifest.Tokenizer)
	if err != nil {
		return fmt.Errorf("plan %s: %w", c.Plan, err)
	}
	ctxLen, err := c.contextLength(&p.Manifest)
	if err != nil {
		return err
	}
	// The prompt must fit before the model is loaded, let alone prefilled.
	prompt := tokenizer.EncodePrompt(tok, c.Prompt)
	if err := runtime.CheckPrompt(len(prompt), ctxLen); err != nil {
		return flagError(err)
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
		Sampling:      sampling,
		MaxTokens:     c.MaxTokens,
		StopTokens:    tok.Info().StopIDs,
		PrefillChunk:  info.MaxTokens,
		ContextLength: info.ContextLength,
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
	fmt.Fprintf(os.Stderr, "%s on %s: prompt %s in %v (%.1f tok/s), %d generated in %v (%.2f tok/s), stop: %s\n",
		info.Model, info.DeviceName, cli.Count(len(prompt), "token", "tokens"), res.PrefillDuration.Round(1e5), rate(len(prompt), res.PrefillDuration.Seconds()),
		len(res.Tokens), res.DecodeDuration.Round(1e5), rate(len(res.Tokens)-1, res.DecodeDuration.Seconds()), res.StopReason)
	return nil
}

// flagError names a runtime limit's field by its flag: max_tokens is
// --max-tokens.
func flagError(err error) error {
	var le *runtime.LimitError
	if errors.As(err, &le) {
		return fmt.Errorf("--%s: %s", strings.ReplaceAll(le.Field, "_", "-"), le.Message)
	}
	return err
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

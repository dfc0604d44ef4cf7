package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching"
)

// batchedResult is bench --slots: N sequences of --pp prompt tokens and
// --tg generated tokens each, stepped together on the device's batched
// step, as llama.cpp's llama-batched-bench measures (-npp PP -ntg TG -npl
// N): the prompts' throughput, then the generation's; medians.
type batchedResult struct {
	Plan       string  `json:"plan"`
	Model      string  `json:"model"`
	Quant      string  `json:"quant"`
	Device     string  `json:"device"`
	DeviceName string  `json:"device_name"`
	Runs       int     `json:"runs"`
	Date       string  `json:"date"`
	Slots      int     `json:"slots"` // B: the sequences
	PP         int     `json:"pp"`
	TG         int     `json:"tg"`
	StepTokens int     `json:"step_tokens"`  // a prefill step's tokens at most (the plan's max_tokens)
	KVTokens   int     `json:"n_kv"`         // positions the sequences hold at the end: B·(PP+TG)
	PromptMs   float64 `json:"t_pp_ms"`      // every prompt prefilled
	PromptTokS float64 `json:"s_pp_tok_s"`   // B·PP / t_pp
	GenMs      float64 `json:"t_tg_ms"`      // TG steps of B tokens
	GenTokS    float64 `json:"s_tg_tok_s"`   // B·TG / t_tg
	TotalTokS  float64 `json:"s_tok_s"`      // B·(PP+TG) / (t_pp + t_tg)
	DevicePick bool    `json:"device_picks"` // the greedy ids come from the device (runtime.BatchPicker)
}

// runBatched is bench with --slots above 1.
func (c *benchCmd) runBatched() error {
	dev, _, err := c.load(false)
	if err != nil {
		return err
	}
	defer dev.Close()
	info := dev.Info()
	if c.PP+c.TG > info.ContextLength {
		return fmt.Errorf("bench: --pp %d and --tg %d need a context of %d tokens; the device allows %d (--ctx)", c.PP, c.TG, c.PP+c.TG, info.ContextLength)
	}
	bd, ok := dev.(runtime.BatchDevice)
	if !ok {
		return fmt.Errorf("bench: --slots %d: the %s device does not run batched steps", c.Slots, info.Device)
	}
	bt := batching.DefaultBlockTokens
	perSeq := (c.PP + c.TG + bt - 1) / bt
	b, err := bd.NewBatch(runtime.BatchConfig{Sequences: c.Slots, StepTokens: max(info.MaxTokens, c.Slots), BlockTokens: bt})
	if err != nil {
		return fmt.Errorf("bench: --slots %d: %w", c.Slots, err)
	}
	defer b.Close()
	if need := c.Slots * perSeq; need > b.Blocks() {
		return fmt.Errorf("bench: --slots %d of %d positions need %d KV blocks; the pool holds %d", c.Slots, c.PP+c.TG, need, b.Blocks())
	}
	r := batchedResult{Plan: c.Plan, Model: info.Model, Quant: info.QuantKind, Device: info.Device, DeviceName: info.DeviceName,
		Runs: c.Runs, Date: time.Now().UTC().Format(time.RFC3339), Slots: c.Slots, PP: c.PP, TG: c.TG,
		StepTokens: max(info.MaxTokens, c.Slots), KVTokens: c.Slots * (c.PP + c.TG)}
	_, r.DevicePick = b.(runtime.BatchPicker)
	tables := make([][]int32, c.Slots)
	for i := range tables {
		tables[i] = make([]int32, perSeq)
		for j := range tables[i] {
			tables[i][j] = int32(i*perSeq + j)
		}
	}
	var pp, tg []float64
	for run := range c.Runs + 1 {
		label := "warm-up"
		if run > 0 {
			label = fmt.Sprintf("run %d/%d", run, c.Runs)
		}
		progress("%s: %d sequences, pp%d then tg%d", label, c.Slots, c.PP, c.TG)
		p, g, err := c.batchedRound(b, info, tables, rand.New(rand.NewPCG(uint64(run), 3)), r.StepTokens)
		if err != nil {
			return err
		}
		if run > 0 {
			pp, tg = append(pp, p), append(tg, g)
		}
	}
	r.PromptMs, r.GenMs = median(pp), median(tg)
	r.PromptTokS = float64(c.Slots*c.PP) / (r.PromptMs / 1e3)
	r.GenTokS = float64(c.Slots*c.TG) / (r.GenMs / 1e3)
	r.TotalTokS = float64(r.KVTokens) / ((r.PromptMs + r.GenMs) / 1e3)
	return c.report(r, r.print)
}

func (r *batchedResult) print() {
	fmt.Printf("plan     %s: %s %s\n", r.Plan, r.Model, r.Quant)
	fmt.Printf("device   %s %s\n", r.Device, r.DeviceName)
	fmt.Printf("|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |\n")
	fmt.Printf("| %5d | %6d | %4d | %6d | %8.3f | %8.2f | %8.3f | %8.2f | %8.3f | %8.2f |\n", r.PP, r.TG, r.Slots, r.KVTokens,
		r.PromptMs/1e3, r.PromptTokS, r.GenMs/1e3, r.GenTokS, (r.PromptMs+r.GenMs)/1e3, r.TotalTokS)
	fmt.Printf("medians of %d runs after one warm-up; prompts in steps of up to %d tokens; greedy ids from the %s\n",
		r.Runs, r.StepTokens, map[bool]string{true: "device", false: "host"}[r.DevicePick])
}

// batchedRound prefills every sequence's random prompt in steps of up to
// stepTokens tokens, then runs c.TG steps of one token per sequence, each
// fed its greedy pick; it returns both phases' times.
func (c *benchCmd) batchedRound(b runtime.Batch, info runtime.Info, tables [][]int32, rng *rand.Rand, stepTokens int) (ppMs, tgMs float64, err error) {
	ctx := context.Background()
	next := make([]int32, len(tables)) // each sequence's token to feed
	rows := make([]runtime.BatchRow, 0, len(tables))
	who := make([]int, 0, len(tables))
	prompts := make([][]int32, len(tables))
	for i := range prompts {
		prompts[i] = randomTokens(rng, c.PP, info)
	}
	start := time.Now()
	for i, fed := 0, 0; i < len(tables); {
		rows, who = rows[:0], who[:0]
		for budget := stepTokens; i < len(tables) && budget > 0 && len(rows) < cap(rows); {
			n := min(c.PP-fed, budget)
			rows = append(rows, runtime.BatchRow{Tokens: prompts[i][fed : fed+n], Pos: fed, Blocks: tables[i]})
			who = append(who, i)
			fed += n
			budget -= n
			if fed == c.PP {
				i, fed = i+1, 0
			}
		}
		ids, err := greedyStep(ctx, b, info, rows)
		if err != nil {
			return 0, 0, err
		}
		for r, seq := range who {
			next[seq] = ids[r] // the last row of a sequence's prompt sets it
		}
	}
	ppMs = ms(time.Since(start))
	start = time.Now()
	for k := range c.TG {
		rows = rows[:0]
		for i, t := range tables {
			rows = append(rows, runtime.BatchRow{Tokens: next[i : i+1], Pos: c.PP + k, Blocks: t})
		}
		ids, err := greedyStep(ctx, b, info, rows)
		if err != nil {
			return 0, 0, err
		}
		copy(next, ids)
	}
	return ppMs, ms(time.Since(start)), nil
}

// greedyStep runs one step and returns each row's greedy pick: the
// device's where it takes them, else the argmax of the logits copied back.
func greedyStep(ctx context.Context, b runtime.Batch, info runtime.Info, rows []runtime.BatchRow) ([]int32, error) {
	if p, ok := b.(runtime.BatchPicker); ok {
		return p.StepGreedy(ctx, rows)
	}
	logits, err := b.Step(ctx, rows)
	if err != nil {
		return nil, err
	}
	ids := make([]int32, len(rows))
	for r := range rows {
		ids[r] = int32(argmax(logits[r*info.Vocab : (r+1)*info.Vocab]))
	}
	return ids, nil
}

package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llama-orch/orc/internal/cli"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/cuda"
	"github.com/llama-orch/orc/runtime/sample"
	"github.com/llama-orch/orc/tokenizer"
)

// benchCmd measures a plan: decode tg128 after a short
// prompt, prefill pp512, time to first token, load time from process start
// to ready, VRAM used; medians of several runs. BENCHMARKS.md has the method.
type benchCmd struct {
	deviceFlags
	samplingFlags
	Runs       int  `default:"5" help:"Measured runs (after one warm-up); medians are reported."`
	PP         int  `default:"512" help:"Prompt tokens of the prefill test (pp)."`
	TG         int  `default:"128" help:"Decode steps of the generation test (tg)."`
	Prompt     int  `default:"16" help:"Prompt tokens before the decode test."`
	Depth      int  `help:"Tokens already in the cache before every test (pp after --depth cached tokens, tg after --depth + --prompt), as llama-bench's -d."`
	ChunkBytes int  `help:"CUDA weight upload chunk size in bytes (default: the device's)."`
	UploadBufs int  `name:"upload-buffers" help:"CUDA pinned upload buffers in flight, 2 to 64 (default: the device's)."`
	Slots      int  `default:"1" help:"Above 1: N sequences of --pp prompt and --tg generated tokens stepped together on the batched step (llama-batched-bench's -npl), prompt and generation throughput."`
	JSON       bool `help:"Print one JSON object instead of text."`
	LoadOnly   bool `hidden:"" help:"Load, print \"ready\" and exit: the child process timed for load time."`
	SkipHash   bool `hidden:"" help:"With --load-only: skip hashing weights.bin."`

	tok tokenizer.Tokenizer // the plan's, for the served figures
	// phases time load's parts, for --load-only's report on stderr.
	phases struct{ plan, device time.Duration }
}

// benchResult is what bench prints; times in milliseconds, medians.
type benchResult struct {
	Plan        string `json:"plan"`
	Model       string `json:"model"`
	Quant       string `json:"quant"`
	Device      string `json:"device"`
	DeviceName  string `json:"device_name"`
	SM          string `json:"sm,omitempty"`
	CUDAVersion string `json:"cuda_version,omitempty"`
	WeightBytes int64  `json:"weight_bytes"`
	KVCache     string `json:"kv_cache"` // the plan's KV cache format: f16 or q8 (orcc compile --kv-cache)
	Ctx         int    `json:"ctx"`
	Runs        int    `json:"runs"`
	Date        string `json:"date"`

	LoadMs           float64 `json:"load_ms"`            // process start to ready, weights.bin hashed (as serve does)
	LoadUnverifiedMs float64 `json:"load_unverified_ms"` // the same without hashing weights.bin
	UploadMs         float64 `json:"upload_ms"`          // weight upload and the hash beside it, inside the load (CUDA)
	ChunkBytes       int     `json:"chunk_bytes"`
	UploadBuffers    int     `json:"upload_buffers"`

	PP          int     `json:"pp"`
	PrefillTokS float64 `json:"prefill_tok_s"`
	PrefillMs   float64 `json:"prefill_ms"`
	TTFTMs      float64 `json:"ttft_ms"` // pp prompt to the first token's id
	Prompt      int     `json:"prompt"`
	Depth       int     `json:"depth"`
	TG          int     `json:"tg"`
	DecodeTokS  float64 `json:"decode_tok_s"`
	DecodeMsTok float64 `json:"decode_ms_per_token"` // each step returns the greedy token's id (sampled on the GPU where it can be)
	// DecodeLogitsMsTok is the same loop with each step's logits copied to
	// the host instead (the path of a device that cannot sample).
	DecodeLogitsMsTok float64 `json:"decode_logits_ms_per_token"`
	// DecodeGraphMsTok is the decode graph replayed TG times back to back,
	// without the host's loop between steps (CUDA), at the first timed
	// step's position and at the last's: the steps of decode_ms_per_token,
	// whose loop copies the state in, launches the graph and waits for the
	// id every step, lie between the two in attention length.
	DecodeGraphMsTok [2]float64 `json:"decode_graph_ms_per_token"`
	FirstStepMs      float64    `json:"first_decode_ms"` // first decode step of a sequence (a graph capture unless a parked cache fits)
	VRAMBytes        int64      `json:"vram_bytes"`      // weights, arena and one KV cache of ctx tokens, as the device reports
	GPUUsedBytes     int64      `json:"gpu_used_bytes"`  // total − free on the GPU while loaded (CUDA)
	// Sampled is decoding with each measured setting (greedy first), as
	// Generate samples, and as one client streaming through the server.
	Sampled []sampledResult `json:"sampled"`
	// ServedSlots is the served figures' server's batching slots.
	ServedSlots int           `json:"served_slots"`
	Prefix      *prefixResult `json:"prefix_ttft,omitempty"`
}

func (c *benchCmd) Run() error {
	if c.LoadOnly {
		return c.loadOnly()
	}
	if c.Runs < 1 || c.PP < 1 || c.TG < 1 || c.Prompt < 1 || c.Slots < 1 {
		return fmt.Errorf("bench: --runs, --pp, --tg, --prompt and --slots must be at least 1")
	}
	if c.Slots > 1 {
		return c.runBatched()
	}
	if c.Depth < 0 {
		return fmt.Errorf("bench: --depth %d is negative", c.Depth)
	}
	if c.ServedSlots < 1 || c.PrefixTTFT < 0 {
		return fmt.Errorf("bench: --served-slots must be at least 1 and --prefix-ttft not negative")
	}
	if c.PrefixTTFT > 0 && (c.ServedSlots == 1 || c.NoServed) {
		return fmt.Errorf("bench: --prefix-ttft %d: prompts share cached prefixes in the batched server: give --served-slots above 1, without --no-served", c.PrefixTTFT)
	}
	if c.ChunkBytes < 0 {
		return fmt.Errorf("bench: --chunk-bytes %d is negative", c.ChunkBytes)
	}
	if c.UploadBufs != 0 && (c.UploadBufs < cuda.MinUploadBuffers || c.UploadBufs > cuda.MaxUploadBuffers) {
		return fmt.Errorf("bench: --upload-buffers %d: use %d to %d", c.UploadBufs, cuda.MinUploadBuffers, cuda.MaxUploadBuffers)
	}
	r := benchResult{Plan: c.Plan, Runs: c.Runs, ServedSlots: c.ServedSlots, PP: c.PP, TG: c.TG, Prompt: c.Prompt, Depth: c.Depth,
		ChunkBytes: cmp.Or(c.ChunkBytes, cuda.DefaultChunkBytes), UploadBuffers: cmp.Or(c.UploadBufs, cuda.DefaultUploadBuffers),
		Date: time.Now().UTC().Format(time.RFC3339)}
	// The tests must fit the context before anything is loaded.
	p, err := plans.Open(c.Plan, plans.OpenOptions{SkipWeightHash: true})
	if err != nil {
		return err
	}
	ctxLen, err := c.contextLength(&p.Manifest)
	r.KVCache = cmp.Or(p.Manifest.Model.KVCache, "f16")
	p.Close()
	if err != nil {
		return err
	}
	if need := c.need(); need > ctxLen {
		return fmt.Errorf("bench: the tests need a context of %d tokens; the device allows %d (--ctx)", need, ctxLen)
	}
	// Load time first, in child processes, while this one holds no GPU memory.
	if r.LoadMs, r.UploadMs, err = c.timeLoads(false); err != nil {
		return err
	}
	if r.LoadUnverifiedMs, _, err = c.timeLoads(true); err != nil {
		return err
	}
	dev, weightBytes, err := c.load(false)
	if err != nil {
		return err
	}
	defer dev.Close()
	r.WeightBytes = weightBytes
	if err := c.measure(dev, &r); err != nil {
		return err
	}
	return c.report(r, r.print)
}

// report prints result r as one JSON object (--json), else as text.
func (c *benchCmd) report(r any, text func()) error {
	if !c.JSON {
		text()
		return nil
	}
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}

// need is the context the tests reach.
func (c *benchCmd) need() int { return c.Depth + max(c.PP, c.Prompt+1+c.TG) }

// load opens the plan and the device, as serve does (the tokenizer loads
// beside the device); the device owns the plan then.
func (c *benchCmd) load(skipHash bool) (runtime.Device, int64, error) {
	start := time.Now()
	p, err := plans.Open(c.Plan, plans.OpenOptions{SkipWeightHash: skipHash, DeferWeightHash: true})
	if err != nil {
		return nil, 0, err
	}
	c.phases.plan = time.Since(start)
	start = time.Now()
	dev, tok, err := openWithTokenizer(p, func() (runtime.Device, error) {
		if c.deviceKind(p.Manifest.Target) == "cuda" {
			return cuda.Open(p, c.GPU, cuda.Options{Ctx: c.Ctx, ChunkBytes: c.ChunkBytes, UploadBuffers: c.UploadBufs})
		}
		return c.open(p, nil)
	})
	if err != nil {
		p.Close()
		return nil, 0, err
	}
	c.tok = tok
	c.phases.device = time.Since(start)
	return dev, p.Manifest.Memory.WeightBytes, nil
}

// loadOnly is the child side of timeLoads: load, say ready, exit.
func (c *benchCmd) loadOnly() error {
	dev, _, err := c.load(c.SkipHash)
	if err != nil {
		return err
	}
	upload := 0.0
	if d, ok := dev.(*cuda.Device); ok {
		upload = ms(d.UploadTime())
	}
	fmt.Printf("ready %.3f\n", upload)
	os.Stdout.Sync()
	fmt.Fprintf(os.Stderr, "load phases: plan %.1f ms, device and tokenizer beside it %.1f ms (upload and hash %.1f ms)\n",
		ms(c.phases.plan), ms(c.phases.device), upload)
	return dev.Close()
}

// timeLoads starts this program c.Runs times with --load-only and times each
// from the start of the process to its "ready" line; medians.
func (c *benchCmd) timeLoads(skipHash bool) (loadMs, uploadMs float64, err error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	args := []string{"bench", "--load-only", "--plan", c.Plan, "--gpu", strconv.Itoa(c.GPU),
		"--ctx", strconv.Itoa(c.Ctx), "--chunk-bytes", strconv.Itoa(c.ChunkBytes), "--upload-buffers", strconv.Itoa(c.UploadBufs)}
	if c.Device != "" {
		args = append(args, "--device", c.Device)
	}
	if c.Threads > 0 {
		args = append(args, "--threads", strconv.Itoa(c.Threads))
	}
	if skipHash {
		args = append(args, "--skip-hash")
	}
	var loads, uploads []float64
	for i := range c.Runs {
		if skipHash {
			progress("load %d/%d, weights.bin not hashed", i+1, c.Runs)
		} else {
			progress("load %d/%d", i+1, c.Runs)
		}
		cmd := exec.Command(exe, args...)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return 0, 0, err
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		line, rerr := bufio.NewReader(out).ReadString('\n')
		elapsed := time.Since(start)
		werr := cmd.Wait()
		up, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
		if !ok {
			return 0, 0, fmt.Errorf("bench: the load process did not get ready: %w", errors.Join(rerr, werr))
		}
		if werr != nil {
			return 0, 0, fmt.Errorf("bench: the load process: %w", werr)
		}
		u, err := strconv.ParseFloat(up, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: the load process said %q", line)
		}
		loads, uploads = append(loads, ms(elapsed)), append(uploads, u)
	}
	return median(loads), median(uploads), nil
}

// measure runs one warm-up and c.Runs measured rounds of pp and tg.
func (c *benchCmd) measure(dev runtime.Device, r *benchResult) error {
	info := dev.Info()
	r.Model, r.Quant, r.Device, r.DeviceName, r.SM, r.CUDAVersion = info.Model, info.QuantKind, info.Device, info.DeviceName, info.SM, info.CUDAVersion
	r.Ctx = info.ContextLength
	// VRAM as a server holds it: weights, arena and one KV cache of the
	// whole context.
	full, err := dev.NewSequence(info.ContextLength)
	if err != nil {
		return err
	}
	r.VRAMBytes = dev.Info().VRAMBytesUsed
	if d, ok := dev.(*cuda.Device); ok {
		if free, total, err := d.MemInfo(); err == nil {
			r.GPUUsedBytes = total - free
		}
	}
	if err := full.Close(); err != nil {
		return err
	}
	var pp, ttft, tg, tgLogits, first []float64
	var graph [2][]float64
	for run := range c.Runs + 1 {
		label := "warm-up"
		if run > 0 {
			label = fmt.Sprintf("run %d/%d", run, c.Runs)
		}
		rng := rand.New(rand.NewPCG(uint64(run), 1))
		progress("%s: pp%d", label, c.PP)
		p, t, err := c.prefill(dev, info, rng)
		if err != nil {
			return err
		}
		progress("%s: tg%d", label, c.TG)
		f, d, g, err := c.decode(dev, info, rng, true)
		if err != nil {
			return err
		}
		progress("%s: tg%d, logits to the host", label, c.TG)
		_, dl, _, err := c.decode(dev, info, rng, false)
		if err != nil {
			return err
		}
		if run == 0 {
			continue // warm-up: lazy module loading, first-touch allocations
		}
		pp, ttft, first, tg, tgLogits = append(pp, p), append(ttft, t), append(first, f), append(tg, d), append(tgLogits, dl)
		for i, v := range g {
			if v > 0 {
				graph[i] = append(graph[i], v)
			}
		}
	}
	for i, vs := range graph {
		if len(vs) > 0 {
			r.DecodeGraphMsTok[i] = median(vs) / float64(c.TG)
		}
	}
	r.PrefillMs, r.TTFTMs, r.FirstStepMs = median(pp), median(ttft), median(first)
	r.PrefillTokS = float64(c.PP) / (r.PrefillMs / 1e3)
	r.DecodeMsTok = median(tg) / float64(c.TG)
	r.DecodeTokS = 1e3 / r.DecodeMsTok
	r.DecodeLogitsMsTok = median(tgLogits) / float64(c.TG)
	return c.measureSampled(dev, info, r)
}

// measureSampled fills r.Sampled: each setting's decode (one warm-up, then
// medians of c.Runs) and, unless --no-served, its served figure.
func (c *benchCmd) measureSampled(dev runtime.Device, info runtime.Info, r *benchResult) error {
	settings, err := c.settings()
	if err != nil {
		return err
	}
	for _, s := range settings {
		var tg []float64
		for run := range c.Runs + 1 {
			d, err := c.sampledDecode(dev, info, rand.New(rand.NewPCG(uint64(run), 2)), s.Params)
			if err != nil {
				return fmt.Errorf("bench: %s: %w", s.Name, err)
			}
			if run > 0 {
				tg = append(tg, d)
			}
		}
		res := sampledResult{Setting: s.Name, DecodeMsTok: median(tg) / float64(c.TG)}
		res.DecodeTokS = 1e3 / res.DecodeMsTok
		if !c.NoServed {
			if res.ServedTokS, res.ServedTokens, err = c.served(dev, c.tok, s.Params); err != nil {
				return fmt.Errorf("bench: %s: %w", s.Name, err)
			}
		}
		r.Sampled = append(r.Sampled, res)
	}
	if c.PrefixTTFT > 0 {
		p := &prefixResult{}
		if p.ColdMs, p.WarmMs, p.Tokens, err = c.prefixTTFT(dev, c.tok); err != nil {
			return err
		}
		r.Prefix = p
	}
	return nil
}

// progress says on stderr which test and run bench is at: at the defaults
// on the CPU device it runs for minutes.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// randomTokens are n ids drawn uniformly from the vocabulary, as llama-bench
// feeds (the content does not change the work of a dense model).
func randomTokens(rng *rand.Rand, n int, info runtime.Info) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(rng.IntN(info.Vocab))
	}
	return ids
}

// feed runs tokens through seq in steps of the device's max tokens and
// returns the last step's logits (nil for no tokens).
func feed(seq runtime.Sequence, tokens []int32, info runtime.Info) ([]float32, error) {
	step := max(info.MaxTokens, 1)
	var logits []float32
	for i := 0; i < len(tokens); i += step {
		var err error
		if logits, err = seq.Forward(context.Background(), tokens[i:min(i+step, len(tokens))]); err != nil {
			return nil, err
		}
	}
	return logits, nil
}

// prefill times c.PP prompt tokens on a fresh sequence, in steps of the
// device's max tokens, and the first token's id (host argmax) after it.
func (c *benchCmd) prefill(dev runtime.Device, info runtime.Info, rng *rand.Rand) (prefillMs, ttftMs float64, err error) {
	seq, err := dev.NewSequence(c.Depth + c.PP)
	if err != nil {
		return 0, 0, err
	}
	defer seq.Close()
	if _, err := feed(seq, randomTokens(rng, c.Depth, info), info); err != nil {
		return 0, 0, err
	}
	prompt := randomTokens(rng, c.PP, info)
	start := time.Now()
	logits, err := feed(seq, prompt, info)
	if err != nil {
		return 0, 0, err
	}
	prefill := time.Since(start)
	first := argmax(logits) // the first token's id, as greedy generation picks it
	if first < 0 {
		return 0, 0, errors.New("bench: the prefill returned no logits")
	}
	return ms(prefill), ms(time.Since(start)), nil
}

// decode feeds a short prompt, one step timed apart (the CUDA device may
// capture its decode graph there), then times c.TG single-token steps, each
// synchronised with its result on the host: the greedy token's id when
// sampled (on the GPU where the sequence samples there, as generation
// does), else the logits. Tokens fed are random, as in llama-bench. When
// sampled and where the sequence replays its decode graph
// (decodeReplayer), graphMs are c.TG replays back to back after the first
// timed step and after the last.
func (c *benchCmd) decode(dev runtime.Device, info runtime.Info, rng *rand.Rand, sampled bool) (firstMs, tgMs float64, graphMs [2]float64, err error) {
	seq, err := dev.NewSequence(c.Depth + c.Prompt + 1 + c.TG)
	if err != nil {
		return 0, 0, graphMs, err
	}
	defer seq.Close()
	if _, err := feed(seq, randomTokens(rng, c.Depth+c.Prompt, info), info); err != nil {
		return 0, 0, graphMs, err
	}
	greedy := sample.New(sample.Params{})
	step := func(id int32) error {
		tokens := []int32{id}
		if !sampled {
			_, err := seq.Forward(context.Background(), tokens)
			return err
		}
		_, err := runtime.ForwardSample(context.Background(), seq, tokens, greedy, nil)
		return err
	}
	ids := randomTokens(rng, c.TG+1, info)
	start := time.Now()
	if err := step(ids[0]); err != nil {
		return 0, 0, graphMs, err
	}
	firstMs = ms(time.Since(start))
	if graphMs[0], err = c.replay(seq, sampled); err != nil {
		return 0, 0, graphMs, err
	}
	start = time.Now()
	for _, id := range ids[1:] {
		if err := step(id); err != nil {
			return 0, 0, graphMs, err
		}
	}
	tgMs = ms(time.Since(start))
	graphMs[1], err = c.replay(seq, sampled)
	return firstMs, tgMs, graphMs, err
}

// replay times c.TG replays of seq's last decode step back to back in the
// sampled run; 0 where seq has none to replay.
func (c *benchCmd) replay(seq runtime.Sequence, sampled bool) (float64, error) {
	r, ok := seq.(decodeReplayer)
	if !ok || !sampled {
		return 0, nil
	}
	start := time.Now()
	replayed, err := r.ReplayDecode(c.TG)
	if err != nil || !replayed {
		return 0, err
	}
	return ms(time.Since(start)), nil
}

// decodeReplayer is a sequence that replays its captured decode step back
// to back (the CUDA device's).
type decodeReplayer interface {
	ReplayDecode(n int) (bool, error)
}

// argmax is the index of the largest of x, -1 when x is empty.
func argmax(x []float32) int {
	if len(x) == 0 {
		return -1
	}
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

func (r *benchResult) print() {
	fmt.Printf("plan     %s: %s %s\n", r.Plan, r.Model, r.Quant)
	dev := r.DeviceName
	if r.SM != "" {
		dev += fmt.Sprintf(" (%s, CUDA %s)", r.SM, r.CUDAVersion)
	}
	fmt.Printf("device   %s %s, context %d\n", r.Device, dev, r.Ctx)
	fmt.Printf("load     %8.1f ms  process start to ready (%.1f ms without hashing weights.bin; upload %.1f ms through %d buffers of %d bytes)\n",
		r.LoadMs, r.LoadUnverifiedMs, r.UploadMs, r.UploadBuffers, r.ChunkBytes)
	at := ""
	if r.Depth > 0 {
		at = fmt.Sprintf(" @ depth %d", r.Depth)
	}
	fmt.Printf("prefill  %8.1f tok/s pp%d%s (%.2f ms)\n", r.PrefillTokS, r.PP, at, r.PrefillMs)
	fmt.Printf("decode   %8.1f tok/s tg%d%s after a %d-token prompt (%.3f ms/token, greedy id back; first step %.2f ms; %.3f ms/token with the logits back)\n",
		r.DecodeTokS, r.TG, at, r.Prompt, r.DecodeMsTok, r.FirstStepMs, r.DecodeLogitsMsTok)
	if g := r.DecodeGraphMsTok; g[0] > 0 && g[1] > 0 {
		fmt.Printf("         %.3f / %.3f ms/token: the decode graph replayed back to back, without the host's loop, at the first / last step's position\n", g[0], g[1])
	}
	for _, s := range r.Sampled {
		fmt.Printf("sampled  %8.1f tok/s (%.3f ms/token) %s", s.DecodeTokS, s.DecodeMsTok, s.Setting)
		if s.ServedTokS > 0 {
			fmt.Printf("; served %.1f tok/s (%d tokens streamed by /v1/completions)", s.ServedTokS, s.ServedTokens)
		}
		fmt.Println()
	}
	if r.ServedSlots > 1 {
		fmt.Printf("served   through a server batching %d slots\n", r.ServedSlots)
	}
	if p := r.Prefix; p != nil {
		fmt.Printf("prefix   %8.2f ms  served time to first token of a %d-token prompt sharing all but its last sentence with the one before (%.2f ms cold, %.1f %%)\n",
			p.WarmMs, p.Tokens, p.ColdMs, 100*p.WarmMs/p.ColdMs)
	}
	fmt.Printf("ttft     %8.2f ms  for a %d-token prompt\n", r.TTFTMs, r.PP)
	fmt.Printf("vram     %8.1f MiB weights+arena+KV (%s) of %d tokens", float64(r.VRAMBytes)/(1<<20), r.KVCache, r.Ctx)
	if r.GPUUsedBytes > 0 {
		fmt.Printf(" (%.1f MiB in use on the GPU)", float64(r.GPUUsedBytes)/(1<<20))
	}
	fmt.Printf("\nmedians of %s after one warm-up, %s\n", cli.Count(r.Runs, "run", "runs"), r.Date)
}

func init() {
	commands.Add(cli.Command{Name: "bench", Help: "Measure a plan: decode tg128, prefill pp512, TTFT, load time, VRAM (medians).", Cmd: &benchCmd{}})
}

package cuda_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/x448/float16"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	rcuda "github.com/llama-orch/orc/runtime/cuda"
)

// attnCase is one attention shape of the GPU harness: Qwen2.5-0.5B's,
// Phi-3-mini's, gpt-oss's sliding-window and full layers (with sinks), all
// timed, and stories260K's (head_dim 8: tiles padded to 16); kv8: with an
// 8-bit cache (plans.KVCacheQ8).
type attnCase struct {
	name           string
	heads, kvh, hd int
	window         int
	sinks, timed   bool
	kv8            bool
}

var attnCases = []attnCase{
	{"qwen2.5-0.5b", 14, 2, 64, 0, false, true, false},
	{"phi-3-mini", 32, 32, 96, 0, false, true, false},
	{"gpt-oss", 64, 8, 64, 128, true, true, false},
	{"gpt-oss-full", 64, 8, 64, 0, true, true, false},
	{"stories260K", 8, 4, 8, 0, false, false, false},
	{"qwen2.5-0.5b-q8", 14, 2, 64, 0, false, true, true},
	{"phi-3-mini-q8", 32, 32, 96, 0, false, true, true},
	{"gpt-oss-q8", 64, 8, 64, 128, true, true, true},
}

// decodeTuning is a decode (or batched-step) attention tuning the harness
// generates plans with: tune edits the target's description that the
// geometry is chosen from (passes.ChooseDecodeAttention,
// ChoosePagedAttention; nil: the target's own).
type decodeTuning struct {
	name string
	tune func(*passes.GPU)
}

// decodeTunings are checked by TestGPUAttention: the target's (sm_90:
// clusters of 8 for few kv heads, chunks of 128 keys, one stage), the rule
// without clusters (sm_80's: every split's partial through global memory),
// and clusters of 4 taking chunks of 256 keys through two stages, so that
// a warp's ring wraps and a few thousand keys live in several clusters,
// whose partials merge through global memory.
var decodeTunings = []decodeTuning{
	{"target", nil},
	{"no clusters", func(g *passes.GPU) { g.DecodeAttnCluster = 1 }},
	{"clusters of 4, 2 stages", func(g *passes.GPU) {
		g.DecodeAttnCluster, g.DecodeAttnSmem = 4, 2*passes.DecodeAttnStageBytes(96, false)
	}},
}

// decodeSweep are the tunings TestGPUAttentionTiming times with
// ORC_ATTN_SWEEP=1: decodeTunings, and the target's with each of its
// choices moved.
var decodeSweep = append(slices.Clip(decodeTunings),
	decodeTuning{"clusters of 8, 2 stages", func(g *passes.GPU) { g.DecodeAttnSmem = 2 * passes.DecodeAttnStageBytes(96, false) }},
	// Four stages at head_dim 64, chunks of 512 keys: Qwen2.5-0.5B's whole
	// context in one cluster a kv head up to 4,096 keys, one block an SM.
	decodeTuning{"clusters of 8, 4 stages", func(g *passes.GPU) { g.DecodeAttnSmem = 4 * passes.DecodeAttnStageBytes(64, false) }},
	decodeTuning{"clusters of 4", func(g *passes.GPU) { g.DecodeAttnCluster = 4 }},
	decodeTuning{"clusters of 2", func(g *passes.GPU) { g.DecodeAttnCluster = 2 }},
	decodeTuning{"half the blocks", func(g *passes.GPU) { g.DecodeAttnBlocks /= 2 }},
	decodeTuning{"clusters for 32 kv heads", func(g *passes.GPU) { g.SMs *= 2 }},
)

// The token at position p has row attnRow(p) of the q, k and v tables.
const attnRows, attnMaxTokens = 887, 512

func attnRow(p int) int32 { return int32((p*7919 + 13) % attnRows) }

func attnTokens(from, to int) []int32 {
	ts := make([]int32, 0, to-from)
	for p := from; p < to; p++ {
		ts = append(ts, attnRow(p))
	}
	return ts
}

// attnData are a case's random q, k, v tables [attnRows, width] and sinks,
// and k, v rounded to fp16, or to the 8-bit cache's codes and scales, as
// the cache holds them (the reference's).
type attnData struct {
	c              attnCase
	q, k, v, sinks []float32
	kh, vh         []float64
}

func newAttnData(c attnCase, r *rand.Rand) *attnData {
	fill := func(n int, sd float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * sd)
		}
		return x
	}
	// q's spread makes the softmax neither flat nor one-hot.
	d := &attnData{c: c, q: fill(attnRows*c.heads*c.hd, 2), k: fill(attnRows*c.kvh*c.hd, 1), v: fill(attnRows*c.kvh*c.hd, 1)}
	if c.sinks {
		d.sinks = fill(c.heads, 2)
	}
	half := func(x []float32) []float64 {
		y := make([]float64, len(x))
		for i, f := range x {
			y[i] = float64(float16.Fromfloat32(f).Float32())
		}
		return y
	}
	if c.kv8 {
		half = func(x []float32) []float64 {
			r := make([]float32, len(x))
			plans.KVQ8Round(r, x, c.hd)
			y := make([]float64, len(x))
			for i, f := range r {
				y[i] = float64(f)
			}
			return y
		}
	}
	d.kh, d.vh = half(d.k), half(d.v)
	return d
}

// ref is the attention of the tokens at positions from..to-1 over every key
// up to each one's position, in float64 (rows [to-from, heads·hd]).
func (d *attnData) ref(from, to int) []float64 {
	w := d.c.heads * d.c.hd
	out := make([]float64, (to-from)*w)
	var wg sync.WaitGroup
	for p := from; p < to; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.refAt(attnRow, p, out[(p-from)*w:(p-from+1)*w])
		}()
	}
	wg.Wait()
	return out
}

// refAt writes to o [heads·hd] the attention of the token at position p
// over every key up to p (from its window's start), the token at position
// j being row(j) of the tables, in float64.
func (d *attnData) refAt(row func(j int) int32, p int, o []float64) {
	c := d.c
	w, kw, g := c.heads*c.hd, c.kvh*c.hd, c.heads/c.kvh
	first := 0
	if c.window > 0 {
		first = max(0, p-c.window+1)
	}
	qr := d.q[int(row(p))*w:]
	scores := make([]float64, p+1-first)
	for h := range c.heads {
		off := (h / g) * c.hd
		top := math.Inf(-1)
		if c.sinks {
			top = float64(d.sinks[h])
		}
		for j := first; j <= p; j++ {
			kr := d.kh[int(row(j))*kw+off:]
			s := 0.0
			for i := range c.hd {
				s += float64(qr[h*c.hd+i]) * kr[i]
			}
			s /= math.Sqrt(float64(c.hd))
			scores[j-first], top = s, max(top, s)
		}
		den := 0.0
		if c.sinks {
			den = math.Exp(float64(d.sinks[h]) - top)
		}
		oh := o[h*c.hd : (h+1)*c.hd]
		for j := first; j <= p; j++ {
			e := math.Exp(scores[j-first] - top)
			den += e
			vr := d.vh[int(row(j))*kw+off:]
			for i := range c.hd {
				oh[i] += e * vr[i]
			}
		}
		for i := range oh {
			oh[i] /= den
		}
	}
}

// attnGraph is q, k, v = embed(tables, tokens) feeding the attention of
// layers 0..layers-1. whole: the first output is layer 0's [T, width], read
// back whole (the plan's vocab is max_tokens·width); else last() of the
// layers' sum.
func attnGraph(t *testing.T, c attnCase, layers int, whole bool, ctx int) (*ir.Graph, *plans.Manifest) {
	t.Helper()
	w, kw := int64(c.heads*c.hd), int64(c.kvh*c.hd)
	g := ir.New()
	g.Attrs["max_tokens"] = int64(attnMaxTokens)
	g.Attrs["ctx"] = int64(ctx)
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	vocab := int(w)
	if whole {
		vocab = attnMaxTokens * int(w)
	}
	man := &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model: plans.Model{Name: c.name, Arch: "attention", NLayer: layers, NHead: c.heads, NHeadKV: c.kvh, HeadDim: c.hd,
			Vocab: vocab, ContextLength: ctx},
		Memory: plans.Memory{MaxTokens: attnMaxTokens}}
	if c.kv8 {
		man.Model.KVCache = plans.KVCacheQ8
	}
	table := func(name string, width int64) *ir.Node {
		man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: "f32", Shape: []int64{attnRows, width}, Bytes: 4 * attnRows * width})
		tab := g.Add(ir.OpWeight, ir.F32, ir.Shape{attnRows, width}, map[string]any{"name": name})
		return g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, width}, nil, tab, tok)
	}
	in := []*ir.Node{table("q", w), table("k", kw), table("v", kw)}
	if c.sinks {
		man.Tensors = append(man.Tensors, plans.Tensor{Name: "sinks", DType: "f32", Shape: []int64{int64(c.heads)}, Bytes: 4 * int64(c.heads)})
		in = append(in, g.Add(ir.OpWeight, ir.F32, ir.Shape{int64(c.heads)}, map[string]any{"name": "sinks"}))
	}
	var ys []*ir.Node
	for l := range layers {
		attrs := map[string]any{"layer": int64(l), "heads": int64(c.heads), "kv_heads": int64(c.kvh), "head_dim": int64(c.hd),
			"scale": 1 / math.Sqrt(float64(c.hd)), "window": int64(c.window)}
		if c.kv8 {
			attrs["kv_cache"] = ir.KVCacheQ8
		}
		ys = append(ys, g.Add(ir.OpAttention, ir.F32, ir.Shape{ir.T, w}, attrs, in...))
	}
	if whole {
		g.Outputs = ys
	} else {
		// The layers' sum feeds the one last row, so every attention runs
		// before it (the batched step runs attention only per token).
		sum := ys[0]
		for _, y := range ys[1:] {
			sum = g.Add(ir.OpAdd, ir.F32, ir.Shape{ir.T, w}, nil, sum, y)
		}
		g.Outputs = []*ir.Node{g.Add(ir.OpLast, ir.F32, ir.Shape{1, w}, nil, sum)}
	}
	runGPUPasses(t, g, man)
	return g, man
}

func (d *attnData) bytes(name string) []byte {
	switch name {
	case "q":
		return f32Bytes(d.q)
	case "k":
		return f32Bytes(d.k)
	case "v":
		return f32Bytes(d.v)
	}
	return f32Bytes(d.sinks)
}

// TestCompileAttention compiles the harness's attention plans with nvcc for
// sm_80 and sm_90 (head_dim 96, window and sinks beside the presets' 64).
func TestCompileAttention(t *testing.T) {
	if _, err := cuda.FindNVCC(); err != nil {
		t.Skipf("no nvcc, so the emitted CUDA cannot be compiled here: %v", err)
	}
	for _, c := range attnCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g, man := attnGraph(t, c, 2, true, 4096)
			out, err := cuda.Generate(g, man, cuda.Options{})
			if err != nil {
				t.Fatal(err)
			}
			compiles(t, out.Source)
		})
	}
}

// precompile compiles the plans' sources side by side into fatbins, which
// openGPUPlan then finds (nvcc is single-threaded).
func precompile(t *testing.T, gs []*ir.Graph, mans []*plans.Manifest) {
	t.Helper()
	var outs []*cuda.Output
	for i, g := range gs {
		out, err := cuda.Generate(g, mans[i], cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	compileAll(t, outs)
}

// compileAll compiles the outputs' sources side by side into fatbins.
func compileAll(t *testing.T, outs []*cuda.Output) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(outs))
	for _, out := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := fatbin(out.Source); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// attnPlan is a harness plan generated with a decode tuning.
type attnPlan struct {
	man *plans.Manifest
	out *cuda.Output
}

func newAttnPlan(t *testing.T, c attnCase, layers int, whole bool, ctx int, tu decodeTuning) attnPlan {
	t.Helper()
	g, man := attnGraph(t, c, layers, whole, ctx)
	if tu.tune != nil {
		gpu, err := passes.GPUTarget("sm_90")
		if err != nil {
			t.Fatal(err)
		}
		tu.tune(&gpu)
		if err := errors.Join(passes.ChooseDecodeAttention(g, gpu), passes.ChoosePagedAttention(g, gpu)); err != nil {
			t.Fatal(err)
		}
		man.Graph = ir.Print(g)
	}
	out, err := cuda.Generate(g, man, cuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return attnPlan{man, out}
}

func compilePlans(t *testing.T, ps []attnPlan) {
	t.Helper()
	outs := make([]*cuda.Output, len(ps))
	for i, p := range ps {
		outs[i] = p.out
	}
	compileAll(t, outs)
}

func (p attnPlan) open(t *testing.T, ctx int, d *attnData) *rcuda.Device {
	t.Helper()
	return openGenerated(t, p.out, p.man, ctx, d.bytes)
}

// forward runs tokens at the sequence's position and returns a copy of the
// first rows·width outputs.
func forward(t *testing.T, s runtime.Sequence, tokens []int32, n int) []float32 {
	t.Helper()
	out, err := s.Forward(context.Background(), tokens)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(out[:n])
}

// attnTolerance bounds max|gpu − ref| / max|ref|: q and the softmax
// weights enter the tensor cores as fp16 (2⁻¹¹ relative each), accumulated
// in fp32; k and v are fp16 in the reference too.
const attnTolerance = 5e-3

// TestGPUAttention checks the decode and prefill attention kernels against
// a float64 reference along one sequence: decode steps at positions 0, 1,
// 17, 127, 128, 300, 1023, 1024, 4000 and 30000 and after the deep chunks
// where they leave a gap, prefills of 5, 128 and 512 tokens after 301
// cached ones, and the deep chunks after 4,001 to 16,379 (deepChunks, the
// last ending at 16,384), whose keys split across blocks. The decodes run
// under each of decodeTunings, whose geometries take them alone, through
// one cluster, and through several, whose partials merge through global
// memory; the target's chunks of 128 keys split at 129 keys, fill one
// cluster of 8 at 1,024 and start a second at 1,025, and grow to 256 keys
// past 128 splits (16,385 keys). The prefills run under the target's only:
// they do not depend on it. Every checked step's rows were last written by
// a different step (the output buffer is reused), so a row the kernels
// skip shows as an error.
func TestGPUAttention(t *testing.T) {
	gpuOnly(t)
	const ctx = 30208
	r := rand.New(rand.NewPCG(7, 8))
	var ds []*attnData
	for _, c := range attnCases {
		ds = append(ds, newAttnData(c, r))
	}
	var ps []attnPlan
	for _, tu := range decodeTunings {
		for _, d := range ds {
			ps = append(ps, newAttnPlan(t, d.c, 1, true, ctx, tu))
		}
	}
	compilePlans(t, ps)
	for ti, tu := range decodeTunings {
		for i, d := range ds {
			t.Run(tu.name+"/"+d.c.name, func(t *testing.T) {
				dev := ps[ti*len(ds)+i].open(t, ctx, d)
				s, err := dev.NewSequence(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				w := d.c.heads * d.c.hd
				check := func(what string, from, to int) {
					if s.Pos() < from {
						forward(t, s, attnTokens(s.Pos(), from), 0)
					}
					got := forward(t, s, attnTokens(from, to), (to-from)*w)
					want := d.ref(from, to)
					var diff, top float64
					for j, x := range want {
						e := math.Abs(float64(got[j]) - x)
						if math.IsNaN(e) {
							e = math.Inf(1)
						}
						diff, top = max(diff, e), max(top, math.Abs(x))
					}
					t.Logf("%-24s rel. error %.2e", what, diff/top)
					if !(diff/top <= attnTolerance) {
						t.Errorf("%s: relative error %.2e over %.0e", what, diff/top, attnTolerance)
					}
				}
				prefills := ti == 0
				for _, p := range []int{0, 1, 17, 127, 128, 300} {
					check(fmt.Sprintf("decode at %d", p), p, p+1)
				}
				from := 301
				for _, n := range []int{5, 128, 512} {
					if prefills {
						check(fmt.Sprintf("prefill %d at %d", n, from), from, from+n)
					}
					from += n
				}
				for _, p := range []int{1023, 1024, 4000} {
					check(fmt.Sprintf("decode at %d", p), p, p+1)
				}
				for i, c := range deepChunks {
					end := c[0] + c[1]
					if prefills {
						check(fmt.Sprintf("prefill %d at %d", c[1], c[0]), c[0], end)
					}
					if i+1 == len(deepChunks) || deepChunks[i+1][0] > end { // the next chunk does not go on from here
						check(fmt.Sprintf("decode at %d", end), end, end+1)
					}
				}
				check("decode at 30000", 30000, 30001)
			})
		}
	}
}

// TestGPUAttentionTiming times attention per layer: plans of 8 and of 1
// attention layers over the same q, k, v (so (t₈ − t₁)/7 is one layer's
// kv_store and attend launches inside the decode graph), decode steps at
// positions 16, 1024, 3856, 8192 and 30016 (median of 20 graph replays), and
// a 512-token prefill after 0 and after 3584 cached tokens (median of 5).
// The plans' context is Qwen2.5's 32768, which sizes the decode grids.
// ORC_ATTN_SWEEP=1 times the decode under each of decodeSweep's tunings
// (a list of their names separated by semicolons: those; else the
// target's).
// ORC_ATTN_CASES names the cases timed (comma-separated; else every timed
// one). ORC_ATTN_STEPS=n runs n steps a measurement and the 1-layer plan
// only, for an ncu profile of the kernels themselves.
func TestGPUAttentionTiming(t *testing.T) {
	gpuOnly(t)
	const ctx = 32768
	steps, reps, layerCounts := 20, 5, []int{1, 8}
	if n := os.Getenv("ORC_ATTN_STEPS"); n != "" {
		fmt.Sscan(n, &steps)
		reps, layerCounts = 1, []int{1}
	}
	tunings := decodeTunings[:1]
	if sw := os.Getenv("ORC_ATTN_SWEEP"); sw == "1" {
		tunings = decodeSweep
	} else if sw != "" {
		tunings = nil
		names := strings.Split(sw, ";")
		for _, tu := range decodeSweep {
			if slices.Contains(names, tu.name) {
				tunings = append(tunings, tu)
			}
		}
	}
	r := rand.New(rand.NewPCG(9, 10))
	var ds []*attnData
	only := os.Getenv("ORC_ATTN_CASES")
	cases := strings.Split(only, ",")
	for _, c := range attnCases {
		if c.timed && (only == "" || slices.Contains(cases, c.name)) {
			ds = append(ds, newAttnData(c, r))
		}
	}
	var ps []attnPlan // [tuning][case][layer count]
	for _, tu := range tunings {
		for _, d := range ds {
			for _, l := range layerCounts {
				ps = append(ps, newAttnPlan(t, d.c, l, false, ctx, tu))
			}
		}
	}
	compilePlans(t, ps)
	positions := []int{16, 1024, 3856, 8192, 30016}
	prefills := []int{0, 3584}
	for ti, tu := range tunings {
		for i, d := range ds {
			c := d.c
			// times[plan][measurement]: decode positions, then prefills
			// (the target's tuning only: the others change the decode).
			times := make([][]time.Duration, len(layerCounts))
			for pi := range layerCounts {
				dev := ps[(ti*len(ds)+i)*len(layerCounts)+pi].open(t, ctx, d)
				for _, p := range positions {
					s, err := dev.NewSequence(ctx)
					if err != nil {
						t.Fatal(err)
					}
					forward(t, s, attnTokens(0, p), 0)
					var ts []time.Duration
					for j := range steps + 3 { // the first step captures the graph
						start := time.Now()
						forward(t, s, attnTokens(p+j, p+j+1), 0)
						if j >= 3 {
							ts = append(ts, time.Since(start))
						}
					}
					times[pi] = append(times[pi], median(ts))
					s.Close()
				}
				for _, p := range prefills {
					if ti > 0 {
						break
					}
					times[pi] = append(times[pi], timePrefill(t, dev, ctx, p, attnMaxTokens, reps))
				}
				dev.Close()
			}
			if len(layerCounts) < 2 {
				continue
			}
			perLayer := func(m int) float64 { return float64((times[1][m] - times[0][m]).Nanoseconds()) / 7 / 1e3 }
			keys := func(p int) int {
				if c.window > 0 {
					return min(p+1, c.window)
				}
				return p + 1
			}
			for m, p := range positions {
				us := perLayer(m)
				kvBytes := float64(keys(p) * c.kvh * c.hd * 2 * 2)
				t.Logf("%-13s %-32s decode at %5d: %7.1f µs/layer (kv_store + attend), K+V %8.0f KB, %6.0f GB/s",
					c.name, tu.name, p, us, kvBytes/1e3, kvBytes/us/1e3)
			}
			for m, p := range prefills {
				if len(times[1]) <= len(positions)+m {
					break
				}
				us := perLayer(len(positions) + m)
				var flops float64
				for j := p; j < p+attnMaxTokens; j++ {
					flops += float64(keys(j) * c.heads * c.hd * 4)
				}
				t.Logf("%-13s prefill 512 after %4d: %7.1f µs/layer, %6.1f TFLOP/s (causal q·k and p·v)", c.name, p, us, flops/us/1e6)
			}
		}
	}
}

func median(ts []time.Duration) time.Duration {
	slices.Sort(ts)
	return ts[len(ts)/2]
}

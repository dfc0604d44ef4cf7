package cuda_test

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
	rcuda "github.com/llama-orch/orc/runtime/cuda"
)

// Prefill GEMM anchor (BENCHMARKS.md, the peer): weight [4096 out, 14336 in], 512 tokens;
// the swiglu's F = 2000 leaves a partial tile of output columns.
const gemmOut, gemmIn, gemmT, gemmF = 4096, 14336, 512, 2000

// gemmTailIn is the row length of the K-tail products: not a multiple of
// GEMM_BK (64), so the last K-step is half past IN; only the types of
// 32-element (or smaller) groups can have such rows.
const gemmTailIn = 160

// gemmQKV is the qkv product's parts: uneven, so 64-row tiles straddle q|k.
var gemmQKV = [3]int64{1000, 200, 200}

// gemmTolerance is the relative error the f16 tensor-core GEMM may have:
// both operands are rounded to f16 (2^-11 relative each), accumulation is
// fp32.
const gemmTolerance = 4e-3

// gemmWeight is one weight of the GEMM test plan: GGUF bytes, and its
// dequantized distinct rows (row o of the weight is row o % slabRows).
type gemmWeight struct {
	name     string
	dt       ir.DType
	gt       gguf.Type
	out, in  int64
	data     []byte
	deq      []float32 // [slabRows, in]
	slabRows int
}

// gemmCheck is one checked result: cols columns of output y, starting off
// floats into y's arena span, row-major over the step's tokens (a qkv part
// sits at MAX_TOKENS·(earlier parts' columns)); ref is [gemmT, cols].
type gemmCheck struct {
	name string
	y    *ir.Node
	off  int64
	cols int
	ref  []float64
}

// TestGPUGEMM checks the prefill schedule's tensor-core GEMM for every weight
// dtype at 4096×14336, for the dtypes of 32-element groups at 4096×160 (a
// K tail), a Q4_K swiglu_linear (separate gate and up, F = 2000) and a qkv
// of Q4_K q, k and Q6_K v (one tile mixing accessor types), against a
// float64 reference from quant.Dequantize, at T = 1, 7, 64, 333 and 512,
// each product in two forms (gemmForms): its K split (3 splits of 14336,
// 2 of the tails' 160: neither a whole number of splits of 64) and whole.
// One plan holds them all (one nvcc run); its decode schedule is replaced
// by the prefill schedule so that T = 1 runs the GEMM too (and the split
// kernels' counters serve launch after launch), and its "logits" span
// every output, so one Forward reads them all back. Before each checked
// step the same sequence runs 512 other tokens, so a row the kernel fails
// to write keeps another token's values. Timing: the last steps are
// 512-token prefills; run under ncu (see the log) for per-kernel times, the
// harness reports only the whole step (TestGPUGEMMSplitTiming times the
// split products alone).
func TestGPUGEMM(t *testing.T) {
	gpuOnly(t)
	r := rand.New(rand.NewPCG(7, 8))
	const slab = 256
	var ws, tails []*gemmWeight
	for _, gt := range gemvTypes {
		dt, ok := ir.ParseDType(strings.ToLower(gt.String()))
		if !ok {
			t.Fatalf("no ir dtype for %s", gt)
		}
		ws = append(ws, randomWeight(t, r, "w_"+gt.String(), gt, dt, gemmOut, gemmIn, slab))
		if gt.BlockSize() <= 32 {
			tails = append(tails, randomWeight(t, r, "tail_"+gt.String(), gt, dt, gemmOut, gemmTailIn, slab))
		}
	}
	gate := randomWeight(t, r, "gate", gguf.Q4_K, ir.Q4_K, gemmF, gemmIn, 200)
	up := randomWeight(t, r, "up", gguf.Q4_K, ir.Q4_K, gemmF, gemmIn, 200)
	qkv := [3]*gemmWeight{
		randomWeight(t, r, "wq", gguf.Q4_K, ir.Q4_K, gemmQKV[0], gemmIn, 200),
		randomWeight(t, r, "wk", gguf.Q4_K, ir.Q4_K, gemmQKV[1], gemmIn, 200),
		randomWeight(t, r, "wv", gguf.Q6_K, ir.Q6_K, gemmQKV[2], gemmIn, 200),
	}
	table, tailTable := randomTable(r, gemmIn), randomTable(r, gemmTailIn)

	g, man, forms := gemmGraph(t, ws, tails, gate, up, qkv)
	byName := map[string][]byte{"table": f32Bytes(table), "tail_table": f32Bytes(tailTable)}
	for _, f := range gemmForms {
		for _, w := range append(append(slices.Clone(ws), tails...), gate, up, qkv[0], qkv[1], qkv[2]) {
			byName[w.name+f.suffix] = w.data
		}
	}
	// The "logits" are the arena span holding every output.
	lo, hi := outputSpan(g, gemmT)
	man.Model.Vocab = int((hi - lo) / 4)
	dev := openEditedPlan(t, g, man, 2*gemmT, func(name string) []byte { return byName[name] }, func(k *plans.Kernels) {
		k.Decode = k.Prefill
		k.Logits = lo
	})

	gu := [][]float64{gemmRef(table, gate), gemmRef(table, up)}
	swiRef := make([]float64, gemmT*gemmF)
	for i := range swiRef {
		gv, uv := gu[0][i], gu[1][i]
		swiRef[i] = gv / (1 + math.Exp(-gv)) * uv
	}
	refs, tailRefs := make([][]float64, len(ws)), make([][]float64, len(tails))
	for i, w := range ws {
		refs[i] = gemmRef(table, w)
	}
	for i, w := range tails {
		tailRefs[i] = gemmRef(tailTable, w)
	}
	qkvRefs := [3][]float64{gemmRef(table, qkv[0]), gemmRef(table, qkv[1]), gemmRef(table, qkv[2])}
	var checks []gemmCheck
	for fi, f := range gemmForms {
		pl := forms[fi]
		for i, w := range ws {
			checks = append(checks, gemmCheck{w.gt.String() + f.suffix, pl.ys[i], 0, int(w.out), refs[i]})
		}
		for i, w := range tails {
			checks = append(checks, gemmCheck{w.gt.String() + " K tail" + f.suffix, pl.tails[i], 0, int(w.out), tailRefs[i]})
		}
		checks = append(checks, gemmCheck{"swiglu Q4_K" + f.suffix, pl.sw, 0, gemmF, swiRef})
		var partOff int64
		for i, w := range qkv {
			checks = append(checks, gemmCheck{"qkv " + "qkv"[i:i+1] + " " + w.gt.String() + f.suffix, pl.qkv, partOff, int(w.out), qkvRefs[i]})
			partOff += gemmT * w.out // MAX_TOKENS = gemmT
		}
	}

	worst := make([]float64, len(checks))
	for _, T := range []int{1, 7, 64, 333, 512} {
		got := gemmStep(t, dev, T)
		for i, c := range checks {
			off := (c.y.Attrs["offset"].(int64)-lo)/4 + c.off
			e := relErr64(got[off:off+int64(T*c.cols)], c.ref[:T*c.cols])
			worst[i] = max(worst[i], e)
			if e > gemmTolerance {
				t.Errorf("%s at T=%d: relative error %.2e", c.name, T, e)
			}
		}
	}
	for i, c := range checks {
		t.Logf("%-16s max |gpu-ref|/max|ref| over T=1,7,64,333,512: %.2e", c.name, worst[i])
	}

	// Timing: whole 512-token steps (every GEMM of the plan, the embedding
	// and the read-back of all outputs); the per-kernel times come from ncu.
	var ts []time.Duration
	tokens := make([]int32, gemmT)
	for i := range tokens {
		tokens[i] = int32(i)
	}
	for i := range 6 {
		seq, err := dev.NewSequence(gemmT)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := seq.Forward(context.Background(), tokens); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			ts = append(ts, time.Since(start))
		}
		seq.Close()
	}
	slices.Sort(ts)
	t.Logf("512-token step of %d linears + swiglu + qkv in each of %d forms (with read-back of %d MB): median %v", len(ws)+len(tails), len(gemmForms), (hi-lo)>>20, ts[len(ts)/2])
}

// gemmStep runs 512 poison tokens, then tokens 0..T-1, in one sequence and
// returns the "logits" span.
func gemmStep(t *testing.T, dev *rcuda.Device, T int) []float32 {
	t.Helper()
	return stepAfterPoison(t, dev, gemmT, T)
}

// stepAfterPoison runs n poison tokens (a permutation of 0..n-1), then
// tokens 0..T-1, in one sequence of a plan of n tokens a step and returns
// the "logits" span: a value the kernels fail to write keeps another
// token's.
func stepAfterPoison(t *testing.T, dev *rcuda.Device, n, T int) []float32 {
	t.Helper()
	seq, err := dev.NewSequence(2 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	poison := make([]int32, n)
	for i := range poison {
		poison[i] = int32((i*37 + 11) % n)
	}
	if _, err := seq.Forward(context.Background(), poison); err != nil {
		t.Fatal(err)
	}
	tokens := make([]int32, T)
	for i := range tokens {
		tokens[i] = int32(i)
	}
	got, err := seq.Forward(context.Background(), tokens)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(got)
}

// randomWeight makes an [out, in] weight of type gt from a slab of
// slabRows distinct random rows, tiled.
func randomWeight(t *testing.T, r *rand.Rand, name string, gt gguf.Type, dt ir.DType, out, in int64, slabRows int) *gemmWeight {
	t.Helper()
	b, deq := randomSlab(t, r, gt, slabRows*int(in))
	rowBytes := len(b) / slabRows
	data := make([]byte, 0, int(out)*rowBytes)
	for o := range int(out) {
		k := o % slabRows
		data = append(data, b[k*rowBytes:(k+1)*rowBytes]...)
	}
	return &gemmWeight{name: name, dt: dt, gt: gt, out: out, in: in, data: data, deq: deq, slabRows: slabRows}
}

// randomTable is the embedding [gemmT, in] whose row t is token t's x.
func randomTable(r *rand.Rand, in int) []float32 {
	table := make([]float32, gemmT*in)
	for i := range table {
		table[i] = float32(r.NormFloat64())
	}
	return table
}

// gemmRef is x·wᵀ in float64 for tokens 0..gemmT-1 (x row t = table row t,
// table [gemmT, w.in]), [gemmT, w.out]; the distinct rows are computed in
// parallel.
func gemmRef(table []float32, w *gemmWeight) []float64 {
	in := int(w.in)
	dots := make([]float64, gemmT*w.slabRows) // [slab row][token]
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				row := w.deq[k*in : (k+1)*in]
				for tok := range gemmT {
					x := table[tok*in : (tok+1)*in]
					var s float64
					for i, v := range row {
						s += float64(v) * float64(x[i])
					}
					dots[k*gemmT+tok] = s
				}
			}
		}()
	}
	for k := range w.slabRows {
		next <- k
	}
	close(next)
	wg.Wait()
	out := make([]float64, gemmT*int(w.out))
	for tok := range gemmT {
		for o := range int(w.out) {
			out[tok*int(w.out)+o] = dots[(o%w.slabRows)*gemmT+tok]
		}
	}
	return out
}

// gemmForm is one form of the GEMM test's products: its weights' names end
// in suffix, and its K is cut into splits (a linear of x, of the tails' xt)
// over 128 × 128 tiles, or, unsplit, in GEMMTiles' whole-K tiles.
type gemmForm struct {
	suffix             string
	splits, tailSplits int64
}

// gemmForms: split where the K-steps do not divide evenly (14336 = 224
// steps in 3, 160 = 2.5 steps in 2, the half step in the last split), and
// whole.
var gemmForms = []gemmForm{{" split", 3, 2}, {" whole", 1, 1}}

// gemmPlan is one form's outputs in the GEMM test's graph: the linears ys
// (x [T, gemmIn]) and tails (x [T, gemmTailIn]), the swiglu sw and the qkv.
type gemmPlan struct {
	ys, tails []*ir.Node
	sw, qkv   *ir.Node
}

// gemmGraph is x = embed(table, tokens), xt = embed(tail_table, tokens);
// and for each of gemmForms, y_i = linear(x, w_i) for each weight of ws,
// linear(xt, w) for each of tails; s = swiglu_linear(x, gate, up); qkv(x,
// wq, wk, wv), each form's weights their own (the names suffixed), its
// GEMM tiles recorded as the form says over the passes' record. All are
// outputs.
func gemmGraph(t *testing.T, ws, tails []*gemmWeight, gate, up *gemmWeight, qkv [3]*gemmWeight) (*ir.Graph, *plans.Manifest, []gemmPlan) {
	t.Helper()
	g := ir.New()
	g.Attrs["max_tokens"] = int64(gemmT)
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	man := &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model:  plans.Model{Name: "gemm", Arch: "gemm", NLayer: 1, ContextLength: 2 * gemmT},
		Memory: plans.Memory{MaxTokens: gemmT}}
	embed := func(name string, in int64) *ir.Node {
		man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: "f32", Shape: []int64{gemmT, in}, Bytes: 4 * gemmT * in})
		tab := g.Add(ir.OpWeight, ir.F32, ir.Shape{gemmT, in}, map[string]any{"name": name})
		return g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, in}, nil, tab, tok)
	}
	x, xt := embed("table", gemmIn), embed("tail_table", gemmTailIn)
	var outs []*ir.Node
	for _, f := range gemmForms {
		weight := func(w *gemmWeight) *ir.Node {
			name := w.name + f.suffix
			man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: w.dt.String(), Shape: []int64{w.out, w.in}, Bytes: int64(len(w.data))})
			return g.Add(ir.OpWeight, w.dt, ir.Shape{w.out, w.in}, map[string]any{"name": name})
		}
		for _, w := range ws {
			outs = append(outs, g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, w.out}, nil, x, weight(w)))
		}
		for _, w := range tails {
			outs = append(outs, g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, w.out}, nil, xt, weight(w)))
		}
		outs = append(outs, g.Add(ir.OpSwiGLULinear, ir.F32, ir.Shape{ir.T, gemmF}, nil, x, weight(gate), weight(up)))
		outs = append(outs, g.Add(ir.OpQKV, ir.F32, ir.Shape{ir.T, gemmQKV[0] + gemmQKV[1] + gemmQKV[2]},
			map[string]any{"parts": gemmQKV[:]}, x, weight(qkv[0]), weight(qkv[1]), weight(qkv[2])))
	}
	g.Outputs = outs
	runGPUPasses(t, g, man)
	outs = g.Outputs // the passes may have replaced nodes
	gpu, err := passes.GPUTarget("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	n := len(ws) + len(tails) + 2
	var forms []gemmPlan
	for i, f := range gemmForms {
		o := outs[i*n : (i+1)*n]
		for _, y := range o {
			splits := f.splits
			if y.Inputs[0].Shape[1] == gemmTailIn {
				splits = f.tailSplits
			}
			t.Logf("%s%s: the pass recorded %d splits of %d × %d", y.Op, f.suffix, y.Int("gemm_splits"), y.Int("gemm_tile_m"), y.Int("gemm_tile_n"))
			tl := passes.GEMMTiles{M: 128, N: 128, Splits: splits, Stages: gpu.GEMMStages(128, 128, passes.GEMMBlocks(128))}
			if splits == 1 {
				tl = gpu.WholeKTiles(gemmT, passes.GEMMRows(y))
			}
			recordGEMMTiles(y, tl)
		}
		forms = append(forms, gemmPlan{ys: o[:len(ws)], tails: o[len(ws) : n-2], sw: o[n-2], qkv: o[n-1]})
	}
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	man.Graph = ir.Print(g)
	return g, man, forms
}

// recordGEMMTiles records tiles t on matrix node n, as chooseGEMMTiles does.
func recordGEMMTiles(n *ir.Node, t passes.GEMMTiles) {
	n.Attrs["gemm_tile_m"], n.Attrs["gemm_tile_n"], n.Attrs["gemm_splits"], n.Attrs["gemm_stages"] = t.M, t.N, t.Splits, t.Stages
}

// relErr64 is max|got-want| / max|want|; NaN counts as infinitely wrong.
func relErr64(got []float32, want []float64) float64 {
	var d, m float64
	for i := range want {
		e := math.Abs(float64(got[i]) - want[i])
		if math.IsNaN(e) {
			return math.Inf(1)
		}
		d, m = max(d, e), max(m, math.Abs(want[i]))
	}
	return d / m
}

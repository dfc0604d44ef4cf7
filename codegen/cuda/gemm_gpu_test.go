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
	"github.com/llama-orch/orc/plans"
	rcuda "github.com/llama-orch/orc/runtime/cuda"
)

// Prefill GEMM anchor (PERF.md): weight [4096 out, 14336 in], 512 tokens;
// the swiglu's F = 2000 leaves a partial tile of output columns.
const gemmOut, gemmIn, gemmT, gemmF = 4096, 14336, 512, 2000

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
	out      int64
	data     []byte
	deq      []float32 // [slabRows, gemmIn]
	slabRows int
}

// TestGPUGEMM checks the prefill schedule's tensor-core GEMM for every weight
// dtype at 4096×14336, and a Q4_K swiglu_linear (separate gate and up, F =
// 2000), against a float64 reference from quant.Dequantize, at T = 1, 7, 64,
// 333 and 512. One plan holds them all (one nvcc run); its decode schedule
// is replaced by the prefill schedule so that T = 1 runs the GEMM too, and
// its "logits" span every output, so one Forward reads them all back. Before
// each checked step the same sequence runs 512 other tokens, so a row the
// kernel fails to write keeps another token's values. Timing: the last
// steps are 512-token prefills; run under ncu (see the log) for per-kernel
// times, the harness reports only the whole step.
func TestGPUGEMM(t *testing.T) {
	gpuOnly(t)
	r := rand.New(rand.NewPCG(7, 8))
	const slab = 256
	var ws []*gemmWeight
	for _, gt := range gemvTypes {
		dt, ok := ir.ParseDType(strings.ToLower(gt.String()))
		if !ok {
			t.Fatalf("no ir dtype for %s", gt)
		}
		ws = append(ws, randomWeight(t, r, "w_"+gt.String(), gt, dt, gemmOut, slab))
	}
	gate := randomWeight(t, r, "gate", gguf.Q4_K, ir.Q4_K, gemmF, 200)
	up := randomWeight(t, r, "up", gguf.Q4_K, ir.Q4_K, gemmF, 200)
	table := make([]float32, gemmT*gemmIn)
	for i := range table {
		table[i] = float32(r.NormFloat64())
	}

	g, man, ys, sw := gemmGraph(t, ws, gate, up)
	byName := map[string][]byte{"table": f32Bytes(table), gate.name: gate.data, up.name: up.data}
	for _, w := range ws {
		byName[w.name] = w.data
	}
	// The "logits" are the arena span holding every output.
	lo, hi := int64(math.MaxInt64), int64(0)
	outs := append(slices.Clone(ys), sw)
	for _, y := range outs {
		off := y.Attrs["offset"].(int64)
		lo, hi = min(lo, off), max(hi, off+4*gemmT*y.Shape[1])
	}
	man.Model.Vocab = int((hi - lo) / 4)
	dev := openEditedPlan(t, g, man, 2*gemmT, func(name string) []byte { return byName[name] }, func(k *plans.Kernels) {
		k.Decode = k.Prefill
		k.Logits = lo
	})

	// References, [gemmT, out] per output, tokens 0..gemmT-1 (row t of table).
	refs := make([][]float64, len(outs))
	for i, w := range ws {
		refs[i] = gemmRef(table, w)
	}
	gu := [][]float64{gemmRef(table, gate), gemmRef(table, up)}
	refs[len(ws)] = make([]float64, gemmT*gemmF)
	for i := range refs[len(ws)] {
		gv, uv := gu[0][i], gu[1][i]
		refs[len(ws)][i] = gv / (1 + math.Exp(-gv)) * uv
	}

	names := make([]string, len(outs))
	for i, w := range ws {
		names[i] = w.gt.String()
	}
	names[len(ws)] = "swiglu Q4_K"
	worst := make([]float64, len(outs))
	for _, T := range []int{1, 7, 64, 333, 512} {
		got := gemmStep(t, dev, T)
		for i, y := range outs {
			off := (y.Attrs["offset"].(int64) - lo) / 4
			cols := int(y.Shape[1])
			e := relErr64(got[off:off+int64(T*cols)], refs[i][:T*cols])
			worst[i] = max(worst[i], e)
			if e > gemmTolerance {
				t.Errorf("%s at T=%d: relative error %.2e", names[i], T, e)
			}
		}
	}
	for i := range outs {
		t.Logf("%-12s max |gpu-ref|/max|ref| over T=1,7,64,333,512: %.2e", names[i], worst[i])
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
	t.Logf("512-token step of %d GEMMs + swiglu (with read-back of %d MB): median %v", len(ws), (hi-lo)>>20, ts[len(ts)/2])
}

// gemmStep runs 512 poison tokens, then tokens 0..T-1, in one sequence and
// returns the "logits" span.
func gemmStep(t *testing.T, dev *rcuda.Device, T int) []float32 {
	t.Helper()
	seq, err := dev.NewSequence(2 * gemmT)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	poison := make([]int32, gemmT)
	for i := range poison {
		poison[i] = int32((i*37 + 11) % gemmT)
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

// randomWeight makes an [out, gemmIn] weight of type gt from a slab of
// slabRows distinct random rows, tiled.
func randomWeight(t *testing.T, r *rand.Rand, name string, gt gguf.Type, dt ir.DType, out int64, slabRows int) *gemmWeight {
	t.Helper()
	b, deq := randomSlab(t, r, gt, slabRows*gemmIn)
	rowBytes := len(b) / slabRows
	data := make([]byte, 0, int(out)*rowBytes)
	for o := range int(out) {
		k := o % slabRows
		data = append(data, b[k*rowBytes:(k+1)*rowBytes]...)
	}
	return &gemmWeight{name: name, dt: dt, gt: gt, out: out, data: data, deq: deq, slabRows: slabRows}
}

// gemmRef is x·wᵀ in float64 for tokens 0..gemmT-1 (x row t = table row t),
// [gemmT, w.out]; the distinct rows are computed in parallel.
func gemmRef(table []float32, w *gemmWeight) []float64 {
	dots := make([]float64, gemmT*w.slabRows) // [slab row][token]
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				row := w.deq[k*gemmIn : (k+1)*gemmIn]
				for tok := range gemmT {
					x := table[tok*gemmIn : (tok+1)*gemmIn]
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

// gemmGraph is x = embed(table, tokens); y_i = linear(x, w_i) for each
// weight; s = swiglu_linear(x, gate, up); every y_i and s are outputs.
func gemmGraph(t *testing.T, ws []*gemmWeight, gate, up *gemmWeight) (*ir.Graph, *plans.Manifest, []*ir.Node, *ir.Node) {
	t.Helper()
	g := ir.New()
	g.Attrs["max_tokens"] = int64(gemmT)
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	tab := g.Add(ir.OpWeight, ir.F32, ir.Shape{gemmT, gemmIn}, map[string]any{"name": "table"})
	x := g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, gemmIn}, nil, tab, tok)
	man := &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model:   plans.Model{Name: "gemm", Arch: "gemm", NLayer: 1, ContextLength: 2 * gemmT},
		Memory:  plans.Memory{MaxTokens: gemmT},
		Tensors: []plans.Tensor{{Name: "table", DType: "f32", Shape: []int64{gemmT, gemmIn}, Bytes: 4 * gemmT * gemmIn}}}
	weight := func(w *gemmWeight) *ir.Node {
		man.Tensors = append(man.Tensors, plans.Tensor{Name: w.name, DType: w.dt.String(), Shape: []int64{w.out, gemmIn}, Bytes: int64(len(w.data))})
		return g.Add(ir.OpWeight, w.dt, ir.Shape{w.out, gemmIn}, map[string]any{"name": w.name})
	}
	var ys []*ir.Node
	for _, w := range ws {
		ys = append(ys, g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, w.out}, nil, x, weight(w)))
	}
	sw := g.Add(ir.OpSwiGLULinear, ir.F32, ir.Shape{ir.T, gemmF}, nil, x, weight(gate), weight(up))
	g.Outputs = append(ys, sw)
	runGPUPasses(t, g, man)
	ys, sw = g.Outputs[:len(ws)], g.Outputs[len(ws)] // the passes may have replaced nodes
	return g, man, ys, sw
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

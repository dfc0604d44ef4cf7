package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/quant"
	rcuda "github.com/llama-orch/orc/runtime/cuda"
)

// gpt-oss-20b's MoE block: 2880 wide, 32 experts of 2880, top 4.
const moeD, moeF, moeE, moeK, moeVocab = 2880, 2880, 32, 4, 16

// moeWeights are one MoE block's tensors in GGUF order: router f32 [E, D],
// its bias [E], MXFP4 gate and up [E, F, D], down [E, D, F], f32 biases.
type moeWeights struct {
	table, router, routerB []float32
	mats                   [3][]byte    // gate, up, down
	biases                 [3][]float32 // [E·F], [E·F], [E·D]
}

// randomMXFP4 draws MXFP4 blocks: random codes, exponents 2^-8..2^-6, so
// weights are about the 1/√2880 of a trained model's.
func randomMXFP4(r *rand.Rand, elems int) []byte {
	b := make([]byte, elems/32*17)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for o := 0; o < len(b); o += 17 {
		b[o] = byte(119 + r.IntN(3))
	}
	return b
}

func normals(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

func newMoEWeights() *moeWeights {
	r := rand.New(rand.NewPCG(7, 8))
	w := &moeWeights{table: normals(r, moeVocab*moeD, 1), router: normals(r, moeE*moeD, 0.05), routerB: normals(r, moeE, 0.1)}
	for i := range w.mats {
		w.mats[i] = randomMXFP4(r, moeE*moeF*moeD)
	}
	w.biases = [3][]float32{normals(r, moeE*moeF, 0.1), normals(r, moeE*moeF, 0.1), normals(r, moeE*moeD, 0.1)}
	return w
}

// data gives a tensor's bytes by the name moeGraph gives it (any layer).
func (w *moeWeights) data(name string) []byte {
	var layer int
	var part string
	if _, err := fmt.Sscanf(name, "l%d.%s", &layer, &part); err != nil {
		return f32Bytes(w.table)
	}
	switch part {
	case "router":
		return f32Bytes(w.router)
	case "router_b":
		return f32Bytes(w.routerB)
	case "gate":
		return w.mats[0]
	case "up":
		return w.mats[1]
	case "down":
		return w.mats[2]
	case "gate_b":
		return f32Bytes(w.biases[0])
	case "up_b":
		return f32Bytes(w.biases[1])
	}
	return f32Bytes(w.biases[2])
}

// moeGraph is x = embed(table, tokens); y_i = moe_i(x) for i < k over
// layer i's copy of the weights; the logits are last(y_{k-1}).
func moeGraph(t *testing.T, k int) (*ir.Graph, *plans.Manifest) {
	return moeGraphSteps(t, k, 8, 16)
}

// moeGraphSteps is moeGraph for steps of up to maxTokens tokens and a
// context of ctx.
func moeGraphSteps(t *testing.T, k, maxTokens, ctx int) (*ir.Graph, *plans.Manifest) {
	t.Helper()
	g := ir.New()
	g.Attrs["max_tokens"] = int64(maxTokens)
	man := &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model:  plans.Model{Name: "moe", Arch: "moe", NLayer: 1, Vocab: moeD, ContextLength: ctx},
		Memory: plans.Memory{MaxTokens: maxTokens}}
	weight := func(name string, dt ir.DType, shape ir.Shape) *ir.Node {
		gt, _ := gguf.TypeByName(dt.String())
		man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: dt.String(), Shape: shape, Bytes: gt.RowBytes(shape.Elems(1))})
		return g.Add(ir.OpWeight, dt, shape, map[string]any{"name": name})
	}
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	x := g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, moeD}, nil, weight("table", ir.F32, ir.Shape{moeVocab, moeD}), tok)
	var ys []*ir.Node
	for i := range k {
		l := fmt.Sprintf("l%d.", i)
		attrs := map[string]any{"experts": int64(moeE), "top_k": int64(moeK), "limit": 7.0, "alpha": 1.702}
		ys = append(ys, g.Add(ir.OpMoE, ir.F32, ir.Shape{ir.T, moeD}, attrs, x,
			weight(l+"router", ir.F32, ir.Shape{moeE, moeD}), weight(l+"router_b", ir.F32, ir.Shape{moeE}),
			weight(l+"gate", ir.MXFP4, ir.Shape{moeE, moeF, moeD}), weight(l+"gate_b", ir.F32, ir.Shape{moeE, moeF}),
			weight(l+"up", ir.MXFP4, ir.Shape{moeE, moeF, moeD}), weight(l+"up_b", ir.F32, ir.Shape{moeE, moeF}),
			weight(l+"down", ir.MXFP4, ir.Shape{moeE, moeD, moeF}), weight(l+"down_b", ir.F32, ir.Shape{moeE, moeD})))
	}
	last := g.Add(ir.OpLast, ir.F32, ir.Shape{1, moeD}, nil, ys[k-1])
	g.Outputs = append([]*ir.Node{last}, ys[:k-1]...)
	runGPUPasses(t, g, man)
	return g, man
}

// expertRow dequantizes row o of expert e of matrix m ([E, rows, cols]).
func (w *moeWeights) expertRow(m, e, rows, cols, o int, dst []float32) {
	rb := cols / 32 * 17
	start := (e*rows + o) * rb
	if err := quant.Dequantize(gguf.MXFP4, w.mats[m][start:start+rb], dst); err != nil {
		panic(err)
	}
}

// reference is the block's output for one token in float64 from the
// dequantized weights (the CPU device's semantics, runtime/cpu/moe.go).
func (w *moeWeights) reference(token int) []float32 {
	x := w.table[token*moeD : (token+1)*moeD]
	dot := func(a []float32, b []float64) float64 {
		var s float64
		for i, v := range a {
			s += float64(v) * b[i]
		}
		return s
	}
	x64 := make([]float64, moeD)
	for i, v := range x {
		x64[i] = float64(v)
	}
	logits := make([]float64, moeE)
	for e := range logits {
		logits[e] = dot(w.router[e*moeD:(e+1)*moeD], x64) + float64(w.routerB[e])
	}
	chosen, weights := topKSoftmax(logits, moeK)
	out := make([]float64, moeD)
	row := make([]float32, max(moeD, moeF))
	h := make([]float64, moeF)
	const limit, alpha = 7.0, 1.702
	for i, e := range chosen {
		for f := range moeF {
			w.expertRow(0, e, moeF, moeD, f, row[:moeD])
			g := min(dot(row[:moeD], x64)+float64(w.biases[0][e*moeF+f]), limit)
			w.expertRow(1, e, moeF, moeD, f, row[:moeD])
			u := min(max(dot(row[:moeD], x64)+float64(w.biases[1][e*moeF+f]), -limit), limit)
			h[f] = (u + 1) * g / (1 + math.Exp(-alpha*g))
		}
		for o := range moeD {
			w.expertRow(2, e, moeD, moeF, o, row[:moeF])
			out[o] += weights[i] * (dot(row[:moeF], h) + float64(w.biases[2][e*moeD+o]))
		}
	}
	y := make([]float32, moeD)
	for i, v := range out {
		y[i] = float32(v)
	}
	return y
}

// topKSoftmax is the router's rule: the k largest logits (the lower expert
// first on ties) and their softmax weights.
func topKSoftmax(logits []float64, k int) ([]int, []float64) {
	var chosen []int
	for range k {
		best := -1
		for e, l := range logits {
			if !slices.Contains(chosen, e) && (best < 0 || l > logits[best]) {
				best = e
			}
		}
		chosen = append(chosen, best)
	}
	var sum float64
	weights := make([]float64, k)
	for i, e := range chosen {
		weights[i] = math.Exp(logits[e] - logits[chosen[0]])
		sum += weights[i]
	}
	for i := range weights {
		weights[i] /= sum
	}
	return chosen, weights
}

// Relative errors the MoE block may have against the float64 reference: a
// prefill's expert GEMMs take x and h in f16 on tensor cores, as the dense
// prefill GEMMs whose bound is gemmTolerance; decode's run on the integer
// path, x and h rounded to int16 per 32, as the dense GEMVs whose bound is
// gemvTolerance's 2e-4 (measured ≈ 2e-5 a GEMV).
const moePrefillTolerance, moeDecodeTolerance = gemmTolerance, 2e-4

// TestGPUMoE checks gpt-oss's MoE block at the real widths against the
// float64 reference: a 7-token prefill (experts' slot lists, tensor-core GEMMs) and
// three decode steps (integer path), the last token's row each; then times
// one block's decode step (router logits, gate+up quantizing h, down with
// the weighted sum; the blocks share x, quantized once, as a model's
// norm quantizes it) as the difference between plans of four blocks and of
// one over 3.
func TestGPUMoE(t *testing.T) {
	gpuOnly(t)
	w := newMoEWeights()
	var times [2]time.Duration
	for i, k := range []int{1, 4} {
		g, man := moeGraph(t, k)
		dev := openGPUPlan(t, g, man, 16, w.data)
		checkMoESteps(t, w, dev, k)
		times[i], _ = timeDecode(t, dev, 2, 3)
		dev.Close()
	}
	per := (times[1] - times[0]) / 3
	routed := 3 * moeK * len(w.mats[0]) / moeE // the 4 routed experts' gate, up and down
	t.Logf("MoE block decode (2880, 32 experts, top-4, MXFP4): %.1f µs, %d routed weight bytes → %.0f GB/s",
		float64(per.Nanoseconds())/1e3, routed, float64(routed)/per.Seconds()/1e9)
}

// checkMoESteps runs a 7-token prefill and three decode steps on dev (a
// plan of k MoE blocks over w) and checks each step's last row against the
// float64 reference.
func checkMoESteps(t *testing.T, w *moeWeights, dev *rcuda.Device, k int) {
	t.Helper()
	seq, err := dev.NewSequence(16)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	for _, in := range [][]int32{{0, 1, 2, 3, 4, 5, 6}, {9}, {12}, {15}} {
		got, err := seq.Forward(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		tok := int(in[len(in)-1])
		bound := moeDecodeTolerance
		if len(in) > 1 {
			bound = moePrefillTolerance
		}
		if e := relErr(got, w.reference(tok)); e > bound {
			t.Errorf("%d blocks, %d tokens ending in %d: relative error %.2e, bound %.0e", k, len(in), tok, e, bound)
		} else if k == 1 {
			t.Logf("%d tokens ending in %d: relative error %.2e", len(in), tok, e)
		}
	}
}

// TestGPUMoELongPrefill: prefill steps of up to 512 tokens, so that an
// expert's slots fill more than one GEMM tile (moe_tile_m) and its last slot sits
// at different places in its last tile; each step's last row against the
// float64 reference.
func TestGPUMoELongPrefill(t *testing.T) {
	gpuOnly(t)
	w := newMoEWeights()
	g, man := moeGraphSteps(t, 1, 512, 2048)
	dev := openGPUPlan(t, g, man, 2048, w.data)
	defer dev.Close()
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{512, 300, 129, 64, 511} {
		seq, err := dev.NewSequence(n)
		if err != nil {
			t.Fatal(err)
		}
		in := make([]int32, n)
		for i := range in {
			in[i] = int32(r.IntN(moeVocab))
		}
		got, err := seq.Forward(context.Background(), in)
		seq.Close()
		if err != nil {
			t.Fatal(err)
		}
		tok := int(in[n-1])
		if e := relErr(got, w.reference(tok)); e > moePrefillTolerance {
			t.Errorf("%d tokens ending in %d: relative error %.2e, bound %.0e", n, tok, e, moePrefillTolerance)
		} else {
			t.Logf("%d tokens ending in %d: relative error %.2e", n, tok, e)
		}
	}
}

// TestGPUMoETies checks the routers' order on ties (the lower expert first,
// as torch.topk and the CPU device; moe_pick and moe_route): router rows
// and biases repeat in threes, so the fourth choice is always among tied
// experts, and picking another brings other expert weights in.
func TestGPUMoETies(t *testing.T) {
	gpuOnly(t)
	w := newMoEWeights()
	for e := range moeE {
		src := e / 3 * 3
		copy(w.router[e*moeD:(e+1)*moeD], w.router[src*moeD:(src+1)*moeD])
		w.routerB[e] = w.routerB[src]
	}
	g, man := moeGraph(t, 1)
	dev := openGPUPlan(t, g, man, 16, w.data)
	defer dev.Close()
	checkMoESteps(t, w, dev, 1)
}

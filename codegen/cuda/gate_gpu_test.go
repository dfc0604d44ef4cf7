package cuda_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/gguf"
)

// gatedHarness is a gated FFN's test data: random gate and up slabs of slab
// rows of one type, tiled to [f, in] (wg, wu in GGUF order, gDeq and uDeq
// the slabs dequantized), and an embedding table [4, in] whose row t is
// token t's x.
type gatedHarness struct {
	slab, in, f int
	table       []float32
	wg, wu      []byte
	gDeq, uDeq  []float32
}

func newGatedHarness(t *testing.T, r *rand.Rand, gt gguf.Type, slab, in, f int) *gatedHarness {
	t.Helper()
	h := &gatedHarness{slab: slab, in: in, f: f, table: make([]float32, 4*in)}
	var gRows, uRows []byte
	gRows, h.gDeq = randomSlab(t, r, gt, slab*in)
	uRows, h.uDeq = randomSlab(t, r, gt, slab*in)
	for i := range h.table {
		h.table[i] = float32(r.NormFloat64())
	}
	h.wg, h.wu = tile(gRows, f/slab), tile(uRows, f/slab)
	return h
}

// data is the plan's tensor of name: the table, wg or wu.
func (h *gatedHarness) data(name string) []byte {
	return map[string][]byte{"table": f32Bytes(h.table), "wg": h.wg, "wu": h.wu}[name]
}

// want is token tok's act(x·wgᵀ)·(x·wuᵀ) in float64.
func (h *gatedHarness) want(tok int, act func(float64) float64) []float32 {
	x := h.table[tok*h.in : (tok+1)*h.in]
	dot := func(deq []float32, o int) float64 {
		var s float64
		for i, w := range deq[(o%h.slab)*h.in : (o%h.slab+1)*h.in] {
			s += float64(w) * float64(x[i])
		}
		return s
	}
	y := make([]float32, h.f)
	for o := range y {
		y[o] = float32(act(dot(h.gDeq, o)) * dot(h.uDeq, o))
	}
	return y
}

// geluTanh is the CPU device's gelu (runtime/cpu), transformers'
// gelu_pytorch_tanh.
func geluTanh(v float64) float64 {
	return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
}

// TestGPUGELUGate runs Gemma-3-4B's tanh-GELU gated FFN (geluGateGraph:
// one swiglu_linear{act="gelu_tanh"}) in each of gateTypes against a
// float64 reference of the CPU device's formula, gelu(x·wgᵀ)·(x·wuᵀ): a
// decode step (swiglu_mma, swiglu_q8 or swiglu_gemv) and a 4-token prefill
// (gemm_swiglu), whose last row is checked. Gate and up are random slabs
// of 64 rows tiled to [10240, 2560].
func TestGPUGELUGate(t *testing.T) {
	gpuOnly(t)
	r := rand.New(rand.NewPCG(34, 35))
	for _, dt := range gateTypes {
		gt, _ := gguf.TypeByName(dt.String())
		h := newGatedHarness(t, r, gt, 64, gateIn, gateF)
		g, man := geluGateGraph(t, dt)
		out, err := cuda.Generate(g, man, cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		dl, pl := gateLaunches(t, out)
		dev := openGenerated(t, out, man, 16, h.data)

		step, got := timeDecode(t, dev, 0, 1)
		e := relErr(got, h.want(1, geluTanh))
		t.Logf("%-4s decode %s: step %.1f µs, relative error %.1e", dt, dl.Kernel, float64(step.Nanoseconds())/1e3, e)
		if e > 2*gemvTolerance(gt) { // two products' roundings, multiplied
			t.Errorf("%s decode: relative error %.2e", dt, e)
		}

		seq, err := dev.NewSequence(16)
		if err != nil {
			t.Fatal(err)
		}
		got, err = seq.Forward(context.Background(), []int32{0, 1, 2, 3})
		seq.Close()
		if err != nil {
			t.Fatal(err)
		}
		e = relErr(got, h.want(3, geluTanh))
		t.Logf("%-4s prefill %s: relative error %.1e", dt, pl.Kernel, e)
		if e > gemmTolerance {
			t.Errorf("%s prefill: relative error %.2e", dt, e)
		}
		dev.Close()
	}
}

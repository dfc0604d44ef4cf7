package cuda_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// normCase is one norm kernel's harness: a graph whose output is the norm
// of embedded rows (norm.cu.tmpl), its weights' data, and the float64
// reference of each token's output row.
type normCase struct {
	name   string
	op     ir.Op  // the norm node the passes leave
	kernel string // the launch that computes it
	g      *ir.Graph
	man    *plans.Manifest
	data   map[string][]byte
	want   func(tok int) []float64
}

// normCols is a width of whole 4096-column stretches plus a partial quad
// set: normThreads gives each thread two quads.
const normCols = 4096 + 512 + 64

// normCases builds the RMSNorm, LayerNorm and add+RMSNorm (fuseResidualNorm)
// harnesses over random tables of 4 rows.
func normCases(t *testing.T) []normCase {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	const eps = 1e-5
	random := func(n int, scale float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * scale)
		}
		return v
	}
	// Two tables of 4 rows (a row a token), the norm's weight and bias.
	ta, tb, w, b := random(4*normCols, 3), random(4*normCols, 1), random(normCols, 1), random(normCols, 0.5)
	wb := random(normCols, 1) // a post-norm's weight
	rmsBy := func(x []float64, w []float32) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(len(x))+eps)
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = v * s * float64(w[i])
		}
		return y
	}
	rms := func(x []float64) []float64 { return rmsBy(x, w) }
	layer := func(x []float64) []float64 {
		var m, v float64
		for _, e := range x {
			m += e
		}
		m /= float64(len(x))
		for _, e := range x {
			v += (e - m) * (e - m)
		}
		s := 1 / math.Sqrt(v/float64(len(x))+eps)
		y := make([]float64, len(x))
		for i, e := range x {
			y[i] = (e-m)*s*float64(w[i]) + float64(b[i])
		}
		return y
	}
	tokRow := func(tab []float32, tok int) []float64 {
		x := make([]float64, normCols)
		for i := range x {
			x[i] = float64(tab[tok*normCols+i])
		}
		return x
	}
	vecTensor := func(name string) plans.Tensor {
		return plans.Tensor{Name: name, DType: "f32", Shape: []int64{normCols}, Bytes: 4 * normCols}
	}
	data := map[string][]byte{"table": f32Bytes(ta), "table_b": f32Bytes(tb), "w": f32Bytes(w), "b": f32Bytes(b), "wb": f32Bytes(wb)}
	var cases []normCase
	attrs := map[string]any{"eps": float64(eps)}

	g, x, man := tableGraph("rmsnorm", normCols, normCols)
	wn := g.Add(ir.OpWeight, ir.F32, ir.Shape{normCols}, map[string]any{"name": "w"})
	g.Outputs = []*ir.Node{g.Add(ir.OpRMSNorm, ir.F32, ir.Shape{ir.T, normCols}, attrs, x, wn)}
	man.Tensors = append(man.Tensors, vecTensor("w"))
	cases = append(cases, normCase{"rmsnorm", ir.OpRMSNorm, "rmsnorm_rows", g, man, data, func(tok int) []float64 { return rms(tokRow(ta, tok)) }})

	g, x, man = tableGraph("layernorm", normCols, normCols)
	wn = g.Add(ir.OpWeight, ir.F32, ir.Shape{normCols}, map[string]any{"name": "w"})
	bn := g.Add(ir.OpWeight, ir.F32, ir.Shape{normCols}, map[string]any{"name": "b"})
	g.Outputs = []*ir.Node{g.Add(ir.OpLayerNorm, ir.F32, ir.Shape{ir.T, normCols}, attrs, x, wn, bn)}
	man.Tensors = append(man.Tensors, vecTensor("w"), vecTensor("b"))
	cases = append(cases, normCase{"layernorm", ir.OpLayerNorm, "layernorm_rows", g, man, data, func(tok int) []float64 { return layer(tokRow(ta, tok)) }})

	// add then rmsnorm, which fuseResidualNorm makes one add_rmsnorm whose
	// normed part is the output.
	g, x, man = tableGraph("add_rmsnorm", normCols, normCols)
	tabB := g.Add(ir.OpWeight, ir.F32, ir.Shape{4, normCols}, map[string]any{"name": "table_b"})
	xb := g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, normCols}, nil, tabB, g.Nodes[0])
	sum := g.Add(ir.OpAdd, ir.F32, ir.Shape{ir.T, normCols}, nil, x, xb)
	wn = g.Add(ir.OpWeight, ir.F32, ir.Shape{normCols}, map[string]any{"name": "w"})
	g.Outputs = []*ir.Node{g.Add(ir.OpRMSNorm, ir.F32, ir.Shape{ir.T, normCols}, attrs, sum, wn), sum}
	man.Tensors = append(man.Tensors, plans.Tensor{Name: "table_b", DType: "f32", Shape: []int64{4, normCols}, Bytes: 4 * 4 * normCols}, vecTensor("w"))
	cases = append(cases, normCase{"add_rmsnorm", ir.OpAddRMSNorm, "rmsnorm_rows", g, man, data, func(tok int) []float64 {
		a, b := tokRow(ta, tok), tokRow(tb, tok)
		for i := range a {
			a[i] += b[i]
		}
		return rms(a)
	}})

	// Gemma's post-norm: rmsnorm(x + rmsnorm(x_b)·wb)·w, which
	// fuseResidualNorm and fusePostNorms make one add_post_rmsnorm.
	g, x, man = tableGraph("add_post_rmsnorm", normCols, normCols)
	tabB = g.Add(ir.OpWeight, ir.F32, ir.Shape{4, normCols}, map[string]any{"name": "table_b"})
	xb = g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, normCols}, nil, tabB, g.Nodes[0])
	wbn := g.Add(ir.OpWeight, ir.F32, ir.Shape{normCols}, map[string]any{"name": "wb"})
	post := g.Add(ir.OpRMSNorm, ir.F32, ir.Shape{ir.T, normCols}, attrs, xb, wbn)
	sum = g.Add(ir.OpAdd, ir.F32, ir.Shape{ir.T, normCols}, nil, x, post)
	wn = g.Add(ir.OpWeight, ir.F32, ir.Shape{normCols}, map[string]any{"name": "w"})
	g.Outputs = []*ir.Node{g.Add(ir.OpRMSNorm, ir.F32, ir.Shape{ir.T, normCols}, attrs, sum, wn), sum}
	man.Tensors = append(man.Tensors, plans.Tensor{Name: "table_b", DType: "f32", Shape: []int64{4, normCols}, Bytes: 4 * 4 * normCols},
		vecTensor("wb"), vecTensor("w"))
	cases = append(cases, normCase{"add_post_rmsnorm", ir.OpAddPostNorm, "rmsnorm_post_rows", g, man, data, func(tok int) []float64 {
		a, p := tokRow(ta, tok), rmsBy(tokRow(tb, tok), wb)
		for i := range a {
			a[i] += p[i]
		}
		return rms(a)
	}})
	for i := range cases {
		runGPUPasses(t, cases[i].g, cases[i].man)
	}
	return cases
}

// TestNormHarnessPlans checks, without a GPU, that each norm harness's
// plan computes its output with the kernel it is meant to test.
func TestNormHarnessPlans(t *testing.T) {
	for _, c := range normCases(t) {
		out, err := cuda.Generate(c.g, c.man, cuda.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !launches(out.Kernels.Decode, c.kernel) {
			t.Errorf("%s: no %s launch in the decode schedule", c.name, c.kernel)
		}
		if !slices.ContainsFunc(c.g.Nodes, func(n *ir.Node) bool { return n.Op == c.op }) {
			t.Errorf("%s: the passes left no %s node", c.name, c.op)
		}
	}
}

// launches reports whether a launch of ls runs a kernel of device
// function fn.
func launches(ls []plans.Launch, fn string) bool {
	for _, l := range ls {
		if strings.HasPrefix(l.Kernel, fn+"_") {
			return true
		}
	}
	return false
}

// TestGPUNorms runs each norm harness on the GPU, one token a step, against
// its float64 reference.
func TestGPUNorms(t *testing.T) {
	gpuOnly(t)
	for _, c := range normCases(t) {
		dev := openGPUPlan(t, c.g, c.man, 16, func(name string) []byte { return c.data[name] })
		seq, err := dev.NewSequence(16)
		if err != nil {
			t.Fatal(err)
		}
		for tok := range int32(4) {
			got, err := seq.Forward(context.Background(), []int32{tok})
			if err != nil {
				t.Fatal(err)
			}
			if e := relErr64(got, c.want(int(tok))); e > 1e-5 {
				t.Errorf("%s, token %d: relative error %.2e", c.name, tok, e)
			}
		}
		seq.Close()
		dev.Close()
	}
}

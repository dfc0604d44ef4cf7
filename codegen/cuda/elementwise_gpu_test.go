package cuda_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// ewCols is the harnesses' width: not a multiple of the 256-thread blocks.
const ewCols = 1000

// ewCase is an element-wise kernel's harness (elementwise.cu.tmpl): y =
// op(embedded rows of one or two tables), whose last row is the output
// (last_row in a prefill), and the float64 reference of a token's row.
type ewCase struct {
	name   string
	kernel string
	g      *ir.Graph
	man    *plans.Manifest
	want   func(tok int) []float64
}

// ewCases builds the add, GELU and SwiGLU (two inputs, and one packed [T,
// 2F] input) harnesses over two random tables of 4 rows, a and b.
func ewCases(t *testing.T, a, b []float32) []ewCase {
	t.Helper()
	row := func(tab []float32, tok, cols int) []float64 {
		x := make([]float64, cols)
		for i := range x {
			x[i] = float64(tab[tok*cols+i])
		}
		return x
	}
	silu := func(g float64) float64 { return g / (1 + math.Exp(-g)) }
	// graph starts a harness over table a (and table b, where two) of
	// width cols, op's result of width out the last row's.
	graph := func(name string, cols, out int64, two bool, op func(g *ir.Graph, x, y *ir.Node) *ir.Node) (*ir.Graph, *plans.Manifest) {
		g, x, man := tableGraph(name, cols, out)
		var y *ir.Node
		if two {
			tb := g.Add(ir.OpWeight, ir.F32, ir.Shape{4, cols}, map[string]any{"name": "table_b"})
			y = g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, cols}, nil, tb, g.Nodes[0])
			man.Tensors = append(man.Tensors, plans.Tensor{Name: "table_b", DType: "f32", Shape: []int64{4, cols}, Bytes: 4 * 4 * cols})
		}
		r := op(g, x, y)
		g.Outputs = []*ir.Node{g.Add(ir.OpLast, ir.F32, ir.Shape{1, out}, nil, r)}
		runGPUPasses(t, g, man)
		return g, man
	}
	var cases []ewCase
	g, man := graph("add", ewCols, ewCols, true, func(g *ir.Graph, x, y *ir.Node) *ir.Node {
		return g.Add(ir.OpAdd, ir.F32, ir.Shape{ir.T, ewCols}, nil, x, y)
	})
	cases = append(cases, ewCase{"add", "add_ew", g, man, func(tok int) []float64 {
		x, y := row(a, tok, ewCols), row(b, tok, ewCols)
		for i := range x {
			x[i] += y[i]
		}
		return x
	}})
	g, man = graph("gelu", ewCols, ewCols, false, func(g *ir.Graph, x, _ *ir.Node) *ir.Node {
		return g.Add(ir.OpGELU, ir.F32, ir.Shape{ir.T, ewCols}, nil, x)
	})
	cases = append(cases, ewCase{"gelu", "gelu_ew", g, man, func(tok int) []float64 {
		x := row(a, tok, ewCols)
		for i, v := range x {
			x[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		}
		return x
	}})
	g, man = graph("swiglu", ewCols, ewCols, true, func(g *ir.Graph, x, y *ir.Node) *ir.Node {
		return g.Add(ir.OpSwiGLU, ir.F32, ir.Shape{ir.T, ewCols}, nil, x, y)
	})
	cases = append(cases, ewCase{"swiglu", "swiglu_ew", g, man, func(tok int) []float64 {
		x, y := row(a, tok, ewCols), row(b, tok, ewCols)
		for i := range x {
			x[i] = silu(x[i]) * y[i]
		}
		return x
	}})
	// Packed: table a's rows read as [gate | up] of ewCols/2 each.
	g, man = graph("swiglu_packed", ewCols, ewCols/2, false, func(g *ir.Graph, x, _ *ir.Node) *ir.Node {
		return g.Add(ir.OpSwiGLU, ir.F32, ir.Shape{ir.T, ewCols / 2}, nil, x)
	})
	cases = append(cases, ewCase{"swiglu packed", "swiglu_ew", g, man, func(tok int) []float64 {
		x := row(a, tok, ewCols)
		y := make([]float64, ewCols/2)
		for i := range y {
			y[i] = silu(x[i]) * x[ewCols/2+i]
		}
		return y
	}})
	return cases
}

// ewTables are the harnesses' two random tables of 4 rows.
func ewTables(seed uint64) (a, b []float32) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	a, b = make([]float32, 4*ewCols), make([]float32, 4*ewCols)
	for i := range a {
		a[i], b[i] = float32(2*r.NormFloat64()), float32(r.NormFloat64())
	}
	return a, b
}

// TestElementwiseHarnessPlans checks, without a GPU, that each element-wise
// harness's plan runs its kernel in both schedules, and last_row in a
// prefill.
func TestElementwiseHarnessPlans(t *testing.T) {
	a, b := ewTables(41)
	for _, c := range ewCases(t, a, b) {
		out, err := cuda.Generate(c.g, c.man, cuda.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !launches(out.Kernels.Decode, c.kernel) || !launches(out.Kernels.Prefill, c.kernel) || !launches(out.Kernels.Prefill, "last_row") {
			t.Errorf("%s: want %s in both schedules and last_row in the prefill", c.name, c.kernel)
		}
	}
}

// TestGPUElementwise runs each element-wise harness on the GPU against its
// float64 reference: a prefill of tokens 1-3 (the last row, through
// last_row), then decode steps of each token.
func TestGPUElementwise(t *testing.T) {
	gpuOnly(t)
	a, b := ewTables(41)
	data := map[string][]byte{"table": f32Bytes(a), "table_b": f32Bytes(b)}
	for _, c := range ewCases(t, a, b) {
		dev := openGPUPlan(t, c.g, c.man, 16, func(name string) []byte { return data[name] })
		seq, err := dev.NewSequence(16)
		if err != nil {
			t.Fatal(err)
		}
		check := func(got []float32, tok int) {
			if e := relErr64(got, c.want(tok)); e > 1e-5 {
				t.Errorf("%s, token %d: relative error %.2e", c.name, tok, e)
			}
		}
		got, err := seq.Forward(context.Background(), []int32{1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		check(got, 3)
		for tok := range 4 {
			if got, err = seq.Forward(context.Background(), []int32{int32(tok)}); err != nil {
				t.Fatal(err)
			}
			check(got, tok)
		}
		seq.Close()
		dev.Close()
	}
}

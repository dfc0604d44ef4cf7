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

// ropeCase is a rope_rows harness (rope.cu.tmpl): embedded rows of heads
// heads of hd dims, their first rot dims turned by position.
type ropeCase struct {
	mode           string // "normal": pairs (2i, 2i+1); "neox": (i, i+rot/2)
	heads, hd, rot int64
	base           float64
}

var ropeCases = []ropeCase{
	{"normal", 4, 128, 128, 10000}, // Llama
	{"neox", 14, 64, 64, 1000000},  // Qwen2.5
	{"neox", 4, 96, 96, 10000},     // Phi-3-mini's head_dim
	{"neox", 4, 128, 64, 10000},    // partial rotation: the last 64 dims pass through
	{"normal", 2, 64, 32, 500000},  // partial, interleaved pairs
}

// graph is x = embed(table [4, heads·hd], tokens); y = rope(x,
// positions), whose last row is the output (the logits a step returns).
func (c ropeCase) graph(t *testing.T) (*ir.Graph, *plans.Manifest) {
	t.Helper()
	cols := c.heads * c.hd
	g, x, man := tableGraph("rope", cols, cols)
	man.Model.ContextLength = 64 // TestGPURoPE's decode steps reach position 40
	pos := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "positions"})
	y := g.Add(ir.OpRoPE, ir.F32, ir.Shape{ir.T, cols},
		map[string]any{"heads": c.heads, "head_dim": c.hd, "rot_dim": c.rot, "base": c.base, "mode": c.mode}, x, pos)
	g.Outputs = []*ir.Node{g.Add(ir.OpLast, ir.F32, ir.Shape{1, cols}, nil, y)}
	runGPUPasses(t, g, man)
	return g, man
}

// want is the float64 reference of row x at position pos.
func (c ropeCase) want(x []float32, pos int) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	for h := range int(c.heads) {
		head := y[h*int(c.hd) : (h+1)*int(c.hd)]
		for i := range int(c.rot) / 2 {
			a, b := 2*i, 2*i+1
			if c.mode == "neox" {
				a, b = i, i+int(c.rot)/2
			}
			sn, cs := math.Sincos(float64(pos) * math.Pow(c.base, -2*float64(i)/float64(c.rot)))
			head[a], head[b] = head[a]*cs-head[b]*sn, head[a]*sn+head[b]*cs
		}
	}
	return y
}

// TestRoPEHarnessPlans checks, without a GPU, that each RoPE harness's plan
// computes its output with rope_rows.
func TestRoPEHarnessPlans(t *testing.T) {
	for _, c := range ropeCases {
		g, man := c.graph(t)
		out, err := cuda.Generate(g, man, cuda.Options{})
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if !launches(out.Kernels.Decode, "rope_rows") || !launches(out.Kernels.Prefill, "rope_rows") {
			t.Errorf("%+v: no rope_rows launch in both schedules", c)
		}
	}
}

// TestGPURoPE runs each RoPE harness on the GPU against its float64
// reference: a prefill of 3 tokens at positions 0-2 (its last row), then
// decode steps at positions 3-40, each a token of the table in turn.
func TestGPURoPE(t *testing.T) {
	gpuOnly(t)
	r := rand.New(rand.NewPCG(31, 32))
	for _, c := range ropeCases {
		cols := int(c.heads * c.hd)
		table := make([]float32, 4*cols)
		for i := range table {
			table[i] = float32(r.NormFloat64())
		}
		row := func(tok int32) []float32 { return table[int(tok)*cols : int(tok+1)*cols] }
		g, man := c.graph(t)
		dev := openGPUPlan(t, g, man, 64, func(name string) []byte { return f32Bytes(table) })
		seq, err := dev.NewSequence(64)
		if err != nil {
			t.Fatal(err)
		}
		check := func(got []float32, tok int32, pos int) {
			if e := relErr64(got, c.want(row(tok), pos)); e > 1e-5 {
				t.Errorf("%+v, position %d: relative error %.2e", c, pos, e)
			}
		}
		got, err := seq.Forward(context.Background(), []int32{1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		check(got, 3, 2)
		for pos := 3; pos <= 40; pos++ {
			tok := int32(pos % 4)
			if got, err = seq.Forward(context.Background(), []int32{tok}); err != nil {
				t.Fatal(err)
			}
			check(got, tok, pos)
		}
		seq.Close()
		dev.Close()
	}
}

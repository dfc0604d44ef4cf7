package cpu

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/quant"
)

const storiesGGUF = "../../../shared/testdata/models/stories260k-f32.gguf"

// compiledPlan compiles a GGUF into a CPU plan (the whole pipeline,
// memory planning included) whose steps take at most maxTokens tokens, as
// `orcc compile --device cpu` does, and opens it.
func compiledPlan(t *testing.T, model string, maxTokens int) *plans.Plan {
	t.Helper()
	return compiledPlanKV(t, model, maxTokens, "")
}

// compiledPlanKV is compiledPlan with the KV cache format kv.
func compiledPlanKV(t *testing.T, model string, maxTokens int, kv string) *plans.Plan {
	t.Helper()
	dir := t.TempDir() + "/plan"
	if err := compiler.Compile(compiler.Options{Model: model, Out: dir, Target: "cpu", MaxTokens: maxTokens, KVCache: kv}); err != nil {
		t.Fatal(err)
	}
	return openPlan(t, dir)
}

// openPlan opens the plan in dir for the rest of the test.
func openPlan(t *testing.T, dir string) *plans.Plan {
	t.Helper()
	p, err := plans.Open(dir, plans.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// synthModel writes a preset's synthetic GGUF in its default quantisation
// (seed 1) and returns its path.
func synthModel(t *testing.T, preset string) string {
	t.Helper()
	p, err := synth.Lookup(preset)
	if err != nil {
		t.Fatal(err)
	}
	m, err := synth.Plan(p, p.DefaultQuant)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/model.gguf"
	if err := m.WriteFile(path, 1); err != nil {
		t.Fatal(err)
	}
	return path
}

// harness builds small graphs over random weights, writes them as real
// plans and runs them, so op tests go through the plan format, the IR text
// form and the verifier exactly as compiled plans do.
type harness struct {
	g                 *ir.Graph
	tokens, positions *ir.Node
	values            map[string][]float32 // each weight as the device decodes it
	raw               map[string][]byte
	tensors           []plans.Tensor
	rng               *rand.Rand
}

func newHarness(maxTokens int64) *harness {
	g := ir.New()
	g.Attrs["max_tokens"] = maxTokens
	return &harness{
		g:         g,
		tokens:    g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"}),
		positions: g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "positions"}),
		values:    map[string][]float32{},
		raw:       map[string][]byte{},
		rng:       rand.New(rand.NewPCG(1, 2)),
	}
}

// weight adds a random weight of values in [-scale, scale), stored as dt.
func (h *harness) weight(t *testing.T, name string, dt ir.DType, scale float64, shape ...int64) *ir.Node {
	t.Helper()
	n := ir.Shape(shape).Elems(1)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((h.rng.Float64()*2 - 1) * scale)
	}
	return h.weightOf(t, name, dt, v, shape...)
}

// weightOf adds a weight with the given values (rounded by dt's codec).
func (h *harness) weightOf(t *testing.T, name string, dt ir.DType, v []float32, shape ...int64) *ir.Node {
	t.Helper()
	typ := storageType[dt]
	raw, err := quant.Quantize(typ, v)
	if err != nil {
		t.Fatalf("weight %s: %v", name, err)
	}
	dec := make([]float32, len(v))
	if err := quant.Dequantize(typ, raw, dec); err != nil {
		t.Fatal(err)
	}
	h.values[name], h.raw[name] = dec, raw
	h.tensors = append(h.tensors, plans.Tensor{Name: name, DType: dt.String(), Shape: shape, Bytes: int64(len(raw))})
	return h.g.Add(ir.OpWeight, dt, ir.Shape(shape), map[string]any{"name": name})
}

// act adds a [T, cols] activation: rows of a random table picked by the
// tokens, so each test step feeds the op chosen values.
func (h *harness) act(t *testing.T, name string, cols int64) *ir.Node {
	t.Helper()
	table := h.weight(t, name, ir.F32, 1, 64, cols)
	return h.g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, cols}, nil, table, h.tokens)
}

// rowsOf returns the activation act would feed for these tokens, in float64.
func (h *harness) rowsOf(name string, tokens []int32) [][]float64 {
	v := h.values[name]
	cols := len(v) / 64
	out := make([][]float64, len(tokens))
	for i, id := range tokens {
		out[i] = f64(v[int(id)*cols : (int(id)+1)*cols])
	}
	return out
}

func (h *harness) add(op ir.Op, shape ir.Shape, attrs map[string]any, inputs ...*ir.Node) *ir.Node {
	return h.g.Add(op, ir.F32, shape, attrs, inputs...)
}

// build writes the plan with out's last row as the graph output, opens it
// and binds it.
func (h *harness) build(t *testing.T, out *ir.Node) *program {
	t.Helper()
	if len(out.Shape) != 2 || out.Shape[0] != 1 {
		out = h.add(ir.OpLast, ir.Shape{1, out.Shape[1]}, nil, out)
	}
	h.g.Outputs = []*ir.Node{out}
	p := h.plan(t)
	g, err := ir.Parse(p.Manifest.Graph)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := newProgram(p, g, 2)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// plan writes the graph and weights as a CPU plan and opens it.
func (h *harness) plan(t *testing.T) *plans.Plan {
	t.Helper()
	dir := t.TempDir() + "/plan"
	m := &plans.Manifest{Target: "cpu", Graph: ir.Print(h.g), Tensors: h.tensors,
		Model: plans.Model{Name: "harness", ContextLength: 64}}
	m.Memory.MaxTokens = int(h.g.Attrs["max_tokens"].(int64))
	err := plans.Write(dir, m, func(_ int, tn *plans.Tensor, w io.Writer) error {
		_, err := w.Write(h.raw[tn.Name])
		return err
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return openPlan(t, dir)
}

// runStep runs tokens at pos0.. through pr with cache kv and returns node id's
// buffer (at T = len(tokens) rows).
func runStep(t *testing.T, pr *program, kv *kvCache, tokens []int32, pos0 int, id int) []float32 {
	t.Helper()
	pos := make([]int32, len(tokens))
	for i := range pos {
		pos[i] = int32(pos0 + i)
	}
	if kv == nil {
		kv = newKVCache(pr.kv, 64)
	}
	if _, err := pr.run(context.Background(), &stepState{t: len(tokens), tokens: tokens, positions: pos, kv: kv}); err != nil {
		t.Fatal(err)
	}
	for n, b := range pr.bufs {
		if n.ID == id {
			return b
		}
	}
	t.Fatalf("no buffer for node %%%d", id)
	return nil
}

func f64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// matVec is W·x for W [out][in] stored row-major in w.
func matVec(w []float32, x []float64) []float64 {
	in := len(x)
	out := make([]float64, len(w)/in)
	for o := range out {
		for i, xi := range x {
			out[o] += float64(w[o*in+i]) * xi
		}
	}
	return out
}

// near fails when got and want differ by more than tol·(1+|want|).
func near(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	worst, at := 0.0, -1
	for i, w := range want {
		if e := math.Abs(float64(got[i])-w) / (1 + math.Abs(w)); e > worst || math.IsNaN(float64(got[i])) {
			worst, at = e, i
		}
	}
	if worst > tol || (at >= 0 && math.IsNaN(float64(got[at]))) {
		t.Errorf("%s: element %d is %v, want %v (relative error %.3g > %.3g)", what, at, got[at], want[at], worst, tol)
	}
}

func flat(rows [][]float64) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

package ir

import (
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stripComments drops the lines Parse ignores, so a fixture compares with
// what Print writes.
func stripComments(text string) string {
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFixturesParseVerifyPrint(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.ir")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		text := readFixture(t, filepath.Base(f))
		g, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := Verify(g); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if got, want := Print(g), stripComments(text); got != want {
			t.Errorf("%s: Print differs from the fixture:\n%s", f, got)
		}
	}
}

// sameGraph compares two graphs field by field, floats by their bits.
func sameGraph(t *testing.T, a, b *Graph) {
	t.Helper()
	sameAttrs(t, "graph", a.Attrs, b.Attrs)
	if len(a.Nodes) != len(b.Nodes) {
		t.Fatalf("%d nodes vs %d", len(a.Nodes), len(b.Nodes))
	}
	for i, x := range a.Nodes {
		y := b.Nodes[i]
		if x.ID != y.ID || x.Op != y.Op || x.DType != y.DType || !x.Shape.Equal(y.Shape) || len(x.Inputs) != len(y.Inputs) {
			t.Fatalf("node %d: %v vs %v", i, x, y)
		}
		for j := range x.Inputs {
			if x.Inputs[j].ID != y.Inputs[j].ID {
				t.Fatalf("node %d input %d: %%%d vs %%%d", i, j, x.Inputs[j].ID, y.Inputs[j].ID)
			}
		}
		sameAttrs(t, x.String(), x.Attrs, y.Attrs)
	}
	if len(a.Outputs) != len(b.Outputs) {
		t.Fatalf("%d outputs vs %d", len(a.Outputs), len(b.Outputs))
	}
	for i := range a.Outputs {
		if a.Outputs[i].ID != b.Outputs[i].ID {
			t.Fatalf("output %d differs", i)
		}
	}
}

func sameAttrs(t *testing.T, where string, a, b map[string]any) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d attrs vs %d", where, len(a), len(b))
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			t.Fatalf("%s: attr %s lost", where, k)
		}
		same := false
		switch va := va.(type) {
		case float64:
			f, ok := vb.(float64)
			same = ok && math.Float64bits(f) == math.Float64bits(va)
		case []int64:
			l, ok := vb.([]int64)
			same = ok && Shape(l).Equal(Shape(va))
		default:
			same = va == vb
		}
		if !same {
			t.Fatalf("%s: attr %s: %#v became %#v", where, k, va, vb)
		}
	}
}

// randomValue returns an attribute value of a random supported type; floats
// come from random bits (NaN excluded: it has no single text form).
func randomValue(r *rand.Rand) any {
	switch r.Intn(6) {
	case 0:
		return r.Int63() - r.Int63()
	case 1:
		for {
			f := math.Float64frombits(r.Uint64())
			if !math.IsNaN(f) {
				return f
			}
		}
	case 2:
		return []float64{0, math.Copysign(0, -1), 1, 1e6, 1e-6, 0.1, math.Inf(1), math.Inf(-1), 123456789, 1e300}[r.Intn(10)]
	case 3:
		runes := []rune("ab \"\\\n\t{}=%,é😀\x00")
		s := make([]rune, r.Intn(8))
		for i := range s {
			s[i] = runes[r.Intn(len(runes))]
		}
		return string(s)
	case 4:
		return r.Intn(2) == 0
	}
	l := make([]int64, r.Intn(4))
	for i := range l {
		l[i] = r.Int63n(2000) - 1000
	}
	return l
}

// randomGraph builds a valid graph: a chain of dense transformer layers of
// random widths, with random extra attributes on random nodes.
func randomGraph(r *rand.Rand) *Graph {
	g := New()
	g.Attrs["max_tokens"] = 1 + r.Int63n(512)
	g.Attrs["x.graph"] = randomValue(r)
	tok := g.Add(OpInput, I32, Shape{T}, map[string]any{"name": "tokens"})
	pos := g.Add(OpInput, I32, Shape{T}, map[string]any{"name": "positions"})
	hd := int64(2 * (1 + r.Intn(8)))
	kv := int64(1 + r.Intn(3))
	heads := kv * int64(1+r.Intn(3))
	c := heads * hd
	w := func(name string, shape ...int64) *Node {
		return g.Add(OpWeight, F32, shape, map[string]any{"name": name})
	}
	h := g.Add(OpEmbed, F32, Shape{T, c}, nil, w("emb", 50, c), tok)
	for l := 0; l < 1+r.Intn(3); l++ {
		x := g.Add(OpRMSNorm, F32, Shape{T, c}, map[string]any{"eps": 1e-5}, h, w("n", c))
		q := g.Add(OpLinear, F32, Shape{T, c}, nil, x, w("q", c, c))
		k := g.Add(OpLinear, F32, Shape{T, kv * hd}, nil, x, w("k", kv*hd, c), w("kb", kv*hd))
		v := g.Add(OpLinear, F32, Shape{T, kv * hd}, nil, x, w("v", kv*hd, c))
		rope := map[string]any{"heads": heads, "head_dim": hd, "rot_dim": hd, "base": 1e4, "mode": "neox"}
		q = g.Add(OpRoPE, F32, Shape{T, c}, rope, q, pos)
		a := g.Add(OpAttention, F32, Shape{T, c}, map[string]any{"layer": int64(l), "heads": heads, "kv_heads": kv,
			"head_dim": hd, "scale": r.Float64(), "window": int64(0)}, q, k, v)
		h = g.Add(OpAdd, F32, Shape{T, c}, nil, h, a)
		f := int64(1 + r.Intn(40))
		up := g.Add(OpLinear, F32, Shape{T, f}, nil, h, w("up", f, c))
		h = g.Add(OpAdd, F32, Shape{T, c}, nil, h, g.Add(OpLinear, F32, Shape{T, c}, nil, g.Add(OpGELU, F32, Shape{T, f}, nil, up), w("down", c, f)))
	}
	g.Outputs = []*Node{g.Add(OpLast, F32, Shape{1, c}, nil, h)}
	for _, n := range g.Nodes {
		if r.Intn(3) == 0 {
			n.Attrs["x_"+string(rune('a'+r.Intn(26)))] = randomValue(r)
		}
	}
	return g
}

func TestRoundTripRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		g := randomGraph(r)
		if err := Verify(g); err != nil {
			t.Fatalf("graph %d: generated graph fails Verify: %v\n%s", i, err, Print(g))
		}
		text := Print(g)
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("graph %d: %v\n%s", i, err, text)
		}
		sameGraph(t, g, back)
		if again := Print(back); again != text {
			t.Fatalf("graph %d: second print differs:\n%s\nvs\n%s", i, text, again)
		}
		if err := Verify(back); err != nil {
			t.Fatalf("graph %d: parsed graph fails Verify: %v", i, err)
		}
		if next := back.Add(OpInput, I32, Shape{T}, nil); next.ID <= back.Nodes[len(back.Nodes)-2].ID {
			t.Fatalf("graph %d: Add after Parse reuses id %d", i, next.ID)
		}
	}
}

func TestFloatAttrsKeepBits(t *testing.T) {
	for _, f := range []float64{1, -1, 0, math.Copysign(0, -1), 1e6, 1e-6, 0.1, 1.0 / 3, math.Inf(1), math.Inf(-1),
		math.MaxFloat64, math.SmallestNonzeroFloat64, 1e21, 12345678901234567890} {
		s := FormatAttr(f)
		g, err := Parse("graph {f=" + s + "}\noutputs()\n")
		if err != nil {
			t.Fatalf("%v printed as %s: %v", f, s, err)
		}
		back, ok := g.Attrs["f"].(float64)
		if !ok || math.Float64bits(back) != math.Float64bits(f) {
			t.Errorf("%v printed as %s parsed as %#v", f, s, g.Attrs["f"])
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"", "no graph header"},
		{"graph {max_tokens=1}\n", "no outputs line"},
		{"grph {}\noutputs()", "header"},
		{"graph {}\n%0 = input() i32[T] {name=\"tokens\"}\n%0 = input() i32[T] {name=\"tokens\"}\noutputs()", "defined twice"},
		{"graph {}\n%1 = add(%0, %0) f32[T,4]\noutputs()", "%0 is not defined before this use"},
		{"graph {}\n%0 = input() i33[T]\noutputs()", "unknown dtype"},
		{"graph {}\n%0 = input() i32[T,x]\noutputs()", "bad dimension"},
		{"graph {}\n%0 = input() i32[T] {name=\"tok}\noutputs()", "unterminated string"},
		{"graph {a=1 a=2}\noutputs()", "given twice"},
		{"graph {a=[1,x]}\noutputs()", "bad list element"},
		{"graph {a=1..2}\noutputs()", "bad value"},
		{"graph {}\noutputs(%3)", "not defined"},
		{"graph {}\noutputs()\n%0 = input() i32[T]", "after the outputs line"},
		{"graph {}\n%0 = input() i32[T] junk\noutputs()", "unexpected"},
	}
	for _, c := range cases {
		_, err := Parse(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", c.text, err, c.want)
		}
	}
}

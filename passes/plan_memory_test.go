package passes

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/ir"
)

// checkPlan checks a planned graph independently of planMemory: every
// buffer aligned and inside the arena, views at base plus part, and no two
// buffers overlapping while both are live (from their node to their last
// reader, a view's readers counting for its base; outputs to the end).
func checkPlan(t *testing.T, g *ir.Graph) {
	t.Helper()
	mt := g.Attrs["max_tokens"].(int64)
	arena, _ := g.Attrs["arena_bytes"].(int64)
	peak, _ := g.Attrs["peak_bytes"].(int64)
	if peak <= 0 || peak > arena {
		t.Fatalf("peak_bytes %d, arena_bytes %d", peak, arena)
	}
	type buf struct {
		n            *ir.Node
		lo, hi       int64 // bytes
		def, lastUse int
	}
	base := func(n *ir.Node) *ir.Node {
		for n.Op == ir.OpView {
			n = n.Inputs[0]
		}
		return n
	}
	bufs := map[*ir.Node]*buf{}
	var order []*buf
	for i, n := range g.Nodes {
		off, has := n.Attrs["offset"].(int64)
		switch n.Op {
		case ir.OpWeight, ir.OpInput:
			if has {
				t.Fatalf("%v: weights and inputs take no arena", n)
			}
			continue
		case ir.OpView:
			var cols int64
			for _, c := range n.Inputs[0].Ints("parts")[:n.Int("part")] {
				cols += c
			}
			if want := n.Inputs[0].Int("offset") + 4*mt*cols; off != want {
				t.Fatalf("%v: offset %d, want %d", n, off, want)
			}
			continue
		}
		if !has || off%Alignment != 0 {
			t.Fatalf("%v: offset missing or not %d-aligned", n, Alignment)
		}
		b := &buf{n: n, lo: off, hi: off + 4*n.Shape.Elems(mt), def: i, lastUse: i}
		if b.hi > arena {
			t.Fatalf("%v ends at %d beyond the %d-byte arena", n, b.hi, arena)
		}
		bufs[n] = b
		order = append(order, b)
		for _, in := range n.Inputs {
			if ib, ok := bufs[base(in)]; ok {
				ib.lastUse = i
			}
		}
	}
	for _, o := range g.Outputs {
		bufs[base(o)].lastUse = len(g.Nodes)
	}
	for i, a := range order {
		for _, b := range order[i+1:] {
			liveTogether := b.def <= a.lastUse // b is defined after a
			if liveTogether && a.lo < b.hi && b.lo < a.hi {
				t.Fatalf("%v [%d,%d) live to %d overlaps %v [%d,%d)", a.n, a.lo, a.hi, a.lastUse, b.n, b.lo, b.hi)
			}
		}
	}
}

func TestPlanMemoryGoldenIsSound(t *testing.T) {
	for _, f := range []string{"planMemory.before.ir", "pipeline.before.ir"} {
		g := parseFile(t, filepath.Join("testdata", f))
		if err := Run(g, Options{Target: "cpu", Verify: true}); err != nil {
			t.Fatal(err)
		}
		checkPlan(t, g)
	}
}

// randomGraph builds a valid graph of random width and depth whose values
// are read at random later points: long and short live ranges, packed
// nodes read through views, several outputs.
func randomGraph(r *rand.Rand) *ir.Graph {
	g := ir.New()
	g.Attrs["max_tokens"] = 1 + r.Int63n(64)
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	pos := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "positions"})
	c := int64(16 * (1 + r.Intn(4)))
	weight := func(shape ...int64) *ir.Node {
		return g.Add(ir.OpWeight, ir.F32, shape, map[string]any{"name": fmt.Sprintf("w%d", len(g.Nodes))})
	}
	acts := []*ir.Node{g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, c}, nil, weight(50, c), tok)}
	pick := func() *ir.Node { return acts[len(acts)-1-r.Intn(min(len(acts), 6))] }
	for i := 0; i < 10+r.Intn(40); i++ {
		x := pick()
		switch r.Intn(5) {
		case 0:
			acts = append(acts, g.Add(ir.OpAdd, ir.F32, ir.Shape{ir.T, c}, nil, x, pick()))
		case 1:
			acts = append(acts, g.Add(ir.OpRMSNorm, ir.F32, ir.Shape{ir.T, c}, map[string]any{"eps": 1e-6}, x, weight(c)))
		case 2:
			f := int64(8 * (1 + r.Intn(8)))
			h := g.Add(ir.OpGELU, ir.F32, ir.Shape{ir.T, f}, nil, g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, f}, nil, x, weight(f, c)))
			acts = append(acts, g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, c}, nil, h, weight(c, f)))
		case 3:
			n := g.Add(ir.OpAddRMSNorm, ir.F32, ir.Shape{ir.T, 2 * c}, map[string]any{"eps": 1e-6, "parts": []int64{c, c}}, x, pick(), weight(c))
			acts = append(acts, addView(g, n, r.Intn(2)))
		case 4:
			kv := c / 2
			qkv := g.Add(ir.OpQKV, ir.F32, ir.Shape{ir.T, c + 2*kv}, map[string]any{"parts": []int64{c, kv, kv},
				"rope_mode": "neox", "heads": int64(2), "kv_heads": int64(1), "head_dim": c / 2, "rot_dim": c / 2, "base": 1e4},
				x, weight(c, c), weight(kv, c), weight(kv, c), pos)
			a := g.Add(ir.OpAttention, ir.F32, ir.Shape{ir.T, c}, map[string]any{"layer": int64(i), "heads": int64(2),
				"kv_heads": int64(1), "head_dim": c / 2, "scale": 0.1, "window": int64(0)},
				addView(g, qkv, 0), addView(g, qkv, 1), addView(g, qkv, 2))
			acts = append(acts, a)
		}
	}
	g.Outputs = []*ir.Node{pick(), g.Add(ir.OpLast, ir.F32, ir.Shape{1, c}, nil, pick())}
	return g
}

func TestPlanMemoryRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for i := 0; i < 200; i++ {
		g := randomGraph(r)
		if err := ir.Verify(g); err != nil {
			t.Fatalf("graph %d: %v\n%s", i, err, ir.Print(g))
		}
		if err := planMemory(g); err != nil {
			t.Fatalf("graph %d: %v", i, err)
		}
		checkPlan(t, g)
		// The whole pipeline too: the fusions and the schedule change
		// the graph the plan is made for.
		g = randomGraph(r)
		if err := Run(g, Options{Target: "sm_90", Verify: true}); err != nil {
			t.Fatalf("graph %d: %v\n%s", i, err, ir.Print(g))
		}
		checkPlan(t, g)
	}
}

// TestPlanMemoryReusesFreedBuffers: a chain of same-size nodes needs only
// two buffers, whatever its length.
func TestPlanMemoryReusesFreedBuffers(t *testing.T) {
	g := ir.New()
	g.Attrs["max_tokens"] = int64(8)
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	x := g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, 64}, nil, g.Add(ir.OpWeight, ir.F32, ir.Shape{10, 64}, map[string]any{"name": "e"}), tok)
	for range 20 {
		x = g.Add(ir.OpGELU, ir.F32, ir.Shape{ir.T, 64}, nil, x)
	}
	g.Outputs = []*ir.Node{x}
	if err := planMemory(g); err != nil {
		t.Fatal(err)
	}
	checkPlan(t, g)
	if got, want := g.Attrs["arena_bytes"], int64(2*8*64*4); got != want {
		t.Fatalf("arena_bytes %v, want %d", got, want)
	}
}

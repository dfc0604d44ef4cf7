package passes

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llama-orch/orc/ir"
)

func checkPlan(t *testing.T, g *ir.Graph) {
	t.Helper()
	if err := CheckPlan(g); err != nil {
		t.Fatalf("%v\n%s", err, ir.Print(g))
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

// TestCheckPlanRejects breaks a planned golden one way at a time.
func TestCheckPlanRejects(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(g *ir.Graph)
		want   string
	}{
		{"overlap with an input", func(g *ir.Graph) { node(g, 9).Attrs["offset"] = node(g, 8).Attrs["offset"] }, "overlaps"},
		{"unaligned", func(g *ir.Graph) { node(g, 9).Attrs["offset"] = int64(100) }, "not 256-aligned"},
		{"beyond the arena", func(g *ir.Graph) { g.Attrs["arena_bytes"] = int64(4096) }, "beyond the 4096-byte arena"},
		{"view offset", func(g *ir.Graph) { node(g, 12).Attrs["offset"] = int64(0) }, "%12 view: offset 0, want"},
		{"weight offset", func(g *ir.Graph) { node(g, 2).Attrs["offset"] = int64(0) }, "weights and inputs take no arena"},
		{"not planned", func(g *ir.Graph) { delete(g.Attrs, "peak_bytes") }, "not memory-planned"},
		{"output reused", func(g *ir.Graph) { node(g, 19).Attrs["offset"] = node(g, 18).Attrs["offset"] }, "overlaps"},
	}
	for _, c := range cases {
		g := parseFile(t, "testdata/planMemory.after.ir")
		c.mutate(g)
		if err := CheckPlan(g); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestCheckPlanKeepsFoldedNormInputs: a qkv over a normed row that folds
// the norm in (fold_norm) reads the norm's inputs (readsOf), so no input of
// the norm may sit in its buffer, though the norm is their last reader in
// the graph; and a linear that the add alone reads and that writes the
// add's sum (writes_sum, defsOf) makes the add's buffer live from the
// linear on, so it may not take the linear's input's.
func TestCheckPlanKeepsFoldedNormInputs(t *testing.T) {
	for _, c := range []struct {
		name         string
		moved, onto  int
		overlapsWith string
	}{
		// %66 = qkv(%76, ...), %76 the normed part of %75 =
		// add_rmsnorm(%74, %29, ...).
		{"the norm's input in its reader's buffer", 29, 66, "%66 qkv"},
		// %29 = linear(%70, ...), which may write %75's sum.
		{"the add's buffer in its linear's input's", 75, 70, "%70 swiglu_linear"},
	} {
		g := parseFile(t, "testdata/pipeline.sm_90.after.ir")
		// The fixture's Q8_0 weights take no tensor cores: record the
		// choices that a Q4_K model's would, and plan again.
		node(g, 66).Attrs["fold_norm"] = true
		node(g, 29).Attrs["writes_sum"] = true
		if err := planMemory(g); err != nil {
			t.Fatal(err)
		}
		checkPlan(t, g)
		// Both into a new region past the arena, where nothing else lies.
		fresh := g.Attrs["arena_bytes"].(int64)
		g.Attrs["arena_bytes"] = fresh + 1<<20
		for _, id := range []int{c.moved, c.onto} {
			base := node(g, id)
			base.Attrs["offset"] = fresh
			for _, n := range g.Nodes { // views follow their base
				if n.Op == ir.OpView && n.Inputs[0] == base {
					n.Attrs["offset"] = fresh + partOffset(base, n.Int("part"), g.Attrs["max_tokens"].(int64))
				}
			}
		}
		err := CheckPlan(g)
		if err == nil || !strings.Contains(err.Error(), "overlaps") || !strings.Contains(err.Error(), c.overlapsWith) {
			t.Errorf("%s: got %v, want an overlap with %s", c.name, err, c.overlapsWith)
		}
	}
}

// node finds a node by id; the fixture has every id the cases name.
func node(g *ir.Graph, id int) *ir.Node {
	for _, n := range g.Nodes {
		if n.ID == id {
			return n
		}
	}
	return &ir.Node{Attrs: map[string]any{}} // a case naming a missing id then fails to break the plan
}

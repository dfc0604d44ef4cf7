package cpu

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

func parsed(t *testing.T, p *plans.Plan) *ir.Graph {
	t.Helper()
	g, err := ir.Parse(p.Manifest.Graph)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// stepsLogits runs a 5-token prefill and 3 decode steps.
func stepsLogits(t *testing.T, pr *program) [][]float32 {
	t.Helper()
	kv := newKVCache(pr.kv, 32)
	var out [][]float32
	pos := 0
	for _, tokens := range [][]int32{{1, 403, 407, 261, 378}, {432}, {383}, {286}} {
		positions := make([]int32, len(tokens))
		for i := range positions {
			positions[i] = int32(pos + i)
		}
		logits, err := pr.run(context.Background(), &stepState{t: len(tokens), tokens: tokens, positions: positions, kv: kv})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, slices.Clone(logits))
		pos += len(tokens)
	}
	return out
}

// Executing inside the planner's one arena must give bit-identical logits
// to giving every node its own buffer: any live range the planner gets
// wrong corrupts a value and shows here.
func TestArenaMatchesSeparateBuffers(t *testing.T) {
	t.Run("stories260k", func(t *testing.T) { arenaMatches(t, compiledPlan(t, storiesGGUF, 8)) })
	for _, name := range tinyPresets {
		t.Run(name, func(t *testing.T) { arenaMatches(t, compiledPlan(t, synthModel(t, name), 8)) })
	}
}

func arenaMatches(t *testing.T, p *plans.Plan) {
	g := parsed(t, p)
	if _, ok := g.Attrs["arena_bytes"]; !ok {
		t.Fatal("the compiled graph is not memory-planned")
	}
	planned, err := newProgram(p, g, 2)
	if err != nil {
		t.Fatal(err)
	}
	if planned.arena == nil {
		t.Fatal("the planned program did not use the arena")
	}
	g2 := parsed(t, p)
	delete(g2.Attrs, "arena_bytes")
	for _, n := range g2.Nodes {
		delete(n.Attrs, "offset")
	}
	separate, err := newProgram(p, g2, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, b := stepsLogits(t, planned), stepsLogits(t, separate)
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("step %d: arena and separate buffers differ", i)
		}
	}
}

// A plan whose offsets make a node overwrite its own input is refused.
func TestArenaOverlapRefused(t *testing.T) {
	p := compiledPlan(t, storiesGGUF, 8)
	g := parsed(t, p)
	for _, n := range g.Nodes {
		if n.Op != ir.OpLinear {
			continue
		}
		at, ok := n.Inputs[0].Attrs["offset"].(int64)
		if !ok {
			continue
		}
		n.Attrs["offset"] = at
		_, err := newProgram(p, g, 2)
		if err == nil || !strings.Contains(err.Error(), "overlaps") {
			t.Fatalf("linear %%%d placed on its input: %v, want an overlap error", n.ID, err)
		}
		return
	}
	t.Fatal("no linear in the graph")
}

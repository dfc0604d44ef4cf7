package cuda_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// TestGEMMsFollowRecordedTiles: Llama-2-7B's prefill GEMMs at 512 tokens
// take the tiles and splits chooseGEMMTiles recorded: the down projection
// (11008 → 4096) unsplit 128 × 128 tiles (one CTA an SM on 128 of the 132
// SMs), a grid of 32 row tiles by ceil(T/128) token tiles, 4 x stages
// (passes.GEMMPipeSmem of dynamic shared memory); a record of 2 or 3
// splits gives other kernels, with the partials and counters in the arena
// after the planned buffers (past the attention's scratch), and one of 2
// stages another again; the SwiGLU stays unsplit with neither; a record of
// more splits than K-steps and a node without a record are refused.
func TestGEMMsFollowRecordedTiles(t *testing.T) {
	g, man, _ := lowerGPU(t, writeShapes(t, "llama-2-7b", 1, synth.QuantQ4KM), fullWidthMaxTokens)
	var down, swiglu *ir.Node
	for _, n := range g.Nodes {
		switch {
		case n.Op == ir.OpLinear && n.Inputs[0].Op == ir.OpSwiGLULinear:
			down = n
		case n.Op == ir.OpSwiGLULinear:
			swiglu = n
		}
	}
	if down == nil || swiglu == nil {
		t.Fatal("no down projection or SwiGLU in the graph")
	}
	if s, m, n := down.Int("gemm_splits"), down.Int("gemm_tile_m"), down.Int("gemm_tile_n"); s != 1 || m != 128 || n != 128 {
		t.Fatalf("the down projection records %d splits of %d × %d, want 1 of 128 × 128", s, m, n)
	}
	if s := swiglu.Int("gemm_splits"); s != 1 {
		t.Fatalf("the SwiGLU records %d splits, want 1", s)
	}
	arena := g.Attrs["arena_bytes"].(int64)
	check := func(splits, stages int64) {
		t.Helper()
		out, err := cuda.Generate(g, man, cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, l := range out.Kernels.Prefill {
			switch {
			case strings.HasPrefix(l.Kernel, "gemm_linear_") && strings.Contains(l.Kernel, "_11008_4096_"):
				seen++
				suffix, grid := fmt.Sprintf("_11008_4096_128_128_%d", stages), [3][3]int64{{0, 1, 0}, {32, 0, 1}, {0, 128, 0}}
				if splits > 1 {
					suffix, grid[1][2] = suffix+fmt.Sprintf("_%d", splits), splits
				}
				if !strings.HasSuffix(l.Kernel, suffix) || [3][3]int64{l.GridA, l.GridB, l.GridDiv} != grid {
					t.Errorf("%d splits: %s, grid %v %v %v; want …%s, grid %v", splits, l.Kernel, l.GridA, l.GridB, l.GridDiv, suffix, grid)
				}
				if want := passes.GEMMPipeSmem(128, 128, stages); int64(l.Smem) != want {
					t.Errorf("%d stages: %d bytes of shared memory, want %d", stages, l.Smem, want)
				}
				// w, x, y, then with splits part and counters, then the state.
				if want := 4 + 2*min(splits-1, 1); int64(len(l.Args)) != want {
					t.Fatalf("%d splits: %d launch arguments, want %d", splits, len(l.Args), want)
				}
				if splits > 1 {
					part, counters := l.Args[3], l.Args[4]
					bytes := splits * 32 * 4 * 128 * 128 * 4 // splits × tiles × a tile's floats
					if part.Kind != plans.ArgArena || counters.Kind != plans.ArgArena || part.Offset < arena ||
						counters.Offset < part.Offset+bytes || out.ArenaBytes < counters.Offset+32*4*4 {
						t.Errorf("%d splits: part at %d, counters at %d, arena of %d bytes (the planned buffers' %d); want %d bytes of partials, then 128 counters, past the planned buffers",
							splits, part.Offset, counters.Offset, out.ArenaBytes, arena, bytes)
					}
				}
			case strings.HasPrefix(l.Kernel, "gemm_swiglu_"):
				if len(l.Args) != 5 || l.GridB[2] != 1 || !strings.HasSuffix(l.Kernel, "_128_128_4") {
					t.Errorf("the SwiGLU: %s, %d arguments, grid %v; want unsplit", l.Kernel, len(l.Args), l.GridB)
				}
			}
		}
		if seen != 1 {
			t.Errorf("%d splits: %d down projections in the prefill, want 1", splits, seen)
		}
	}
	if st := down.Int("gemm_stages"); st != 4 {
		t.Fatalf("the down projection records %d stages, want 4", st)
	}
	check(1, 4)
	down.Attrs["gemm_splits"] = int64(2)
	check(2, 4)
	down.Attrs["gemm_splits"] = int64(3)
	check(3, 4)
	down.Attrs["gemm_stages"] = int64(2)
	check(3, 2)
	down.Attrs["gemm_splits"] = int64(173)
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "gemm_splits 173: more than the 172 K-steps") {
		t.Errorf("173 splits of 172 K-steps: %v, want a refusal", err)
	}
	for _, k := range []string{"gemm_tile_m", "gemm_tile_n", "gemm_splits", "gemm_stages"} {
		delete(down.Attrs, k)
	}
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "has no GEMM tiles (gemm_tile_m, ...): the GPU passes choose them") {
		t.Errorf("a GEMM without tiles: %v, want a refusal", err)
	}
}

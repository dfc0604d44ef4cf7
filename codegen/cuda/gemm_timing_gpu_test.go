package cuda_test

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
)

// gemmTimingShapes are the prefill products whose whole-K tiles leave the
// SMs short of CTAs at 512 tokens: the down projections of Llama-3.1-8B
// (14336 → 4096), Gemma-3-4B (10240 → 2560), Phi-3-mini (8192 → 3072) and
// Qwen2.5-0.5B (4864 → 896), Llama's and Gemma's o projections, and
// Qwen2.5's short-K o and qkv (its qkv's rows as a linear's), each in the
// weight types Q4_K_M gives it (896 is no whole number of K-quant blocks:
// Q5_0 and Q8_0 there).
var gemmTimingShapes = []struct {
	name    string
	out, in int64
	types   []gguf.Type
}{
	{"Llama-3.1-8B down", 4096, 14336, gemmKQuants},
	{"Gemma-3-4B down", 2560, 10240, gemmKQuants},
	{"Phi-3-mini down", 3072, 8192, gemmKQuants},
	{"Qwen2.5-0.5B down", 896, 4864, gemmKQuants},
	{"Llama-3.1-8B o", 4096, 4096, gemmKQuants},
	{"Gemma-3-4B o", 2560, 2048, gemmKQuants},
	{"Qwen2.5-0.5B o", 896, 896, []gguf.Type{gguf.Q5_0, gguf.Q8_0}},
	{"Qwen2.5-0.5B qkv", 1152, 896, []gguf.Type{gguf.Q5_0, gguf.Q8_0}},
}

// gemmKQuants are the types of Q4_K_M's downs: Q4_K, and Q6_K in some layers.
var gemmKQuants = []gguf.Type{gguf.Q4_K, gguf.Q6_K}

// gemmTimingSlab is the rows of distinct weights each product tiles.
const gemmTimingSlab = 64

// TestGPUGEMMSplitTiming times the prefill GEMM of each of
// gemmTimingShapes at 512 tokens, in its weight types, in the tiles and K
// splits chooseGEMMTiles records (sm_90) and in its whole-K tiles
// (GPU.WholeKTiles: the tiles before splits), side by side in one plan, and
// logs µs and TFLOP/s a launch; it checks each product against float64
// (gemmTolerance) and asserts nothing about speed. The times are
// runtime/cuda's launch profile (Options.ProfileFile): each launch alone
// between two events (about 5 µs of their own), none of the overlap a
// graph gives. Every product has its own weights (about 380 MB: past L2).
// ORC_GPU_BENCH=1.
func TestGPUGEMMSplitTiming(t *testing.T) {
	gpuOnly(t)
	if os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("set ORC_GPU=1 ORC_GPU_BENCH=1 on a GPU host")
	}
	gpu, err := passes.GPUTarget("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	pl := newGEMMTimingPlan("gemm_timing", rand.New(rand.NewPCG(34, 36)))
	g := pl.g
	type product struct {
		shape, form string
		w           *gemmWeight
		y           *ir.Node
		tiles       passes.GEMMTiles
	}
	var prods []*product
	for _, sh := range gemmTimingShapes {
		for _, gt := range sh.types {
			w := pl.randomWeight(t, gt, sh.out, sh.in)
			for _, form := range []string{"split", "whole"} {
				p := &product{shape: sh.name, form: form, w: w}
				p.y = g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, sh.out}, nil, pl.x(sh.in), pl.weight(w))
				g.Outputs = append(g.Outputs, p.y)
				prods = append(prods, p)
			}
		}
	}
	after := runGPUPasses(t, g, pl.man)
	for _, p := range prods {
		p.y = after[p.y]
		p.tiles = passes.GEMMTiles{M: p.y.Int("gemm_tile_m"), N: p.y.Int("gemm_tile_n"), Splits: p.y.Int("gemm_splits"), Stages: p.y.Int("gemm_stages")}
		if p.form == "whole" {
			p.tiles = gpu.WholeKTiles(gemmT, p.w.out)
			recordGEMMTiles(p.y, p.tiles)
		}
	}
	got, lo, us, kernelOf := pl.profile(t)
	t.Logf("%-18s %-5s %-5s %-13s %9s %8s %9s  %s", "product", "type", "form", "tiles", "µs", "TFLOP/s", "rel_err", "kernel")
	for _, p := range prods {
		off := (p.y.Attrs["offset"].(int64) - lo) / 4
		e := relErr64(got[off:off+gemmT*p.w.out], gemmRef(pl.tables[p.w.in], p.w))
		if e > gemmTolerance {
			t.Errorf("%s %s %s: relative error %.2e", p.shape, p.w.gt, p.form, e)
		}
		kernel, u := kernelOf[p.y.Attrs["offset"].(int64)], us[p.y.Attrs["offset"].(int64)]
		t.Logf("%-18s %-5s %-5s %3d×%3d / %-3d %9.1f %8.1f %9.1e  %s", p.shape, p.w.gt, p.form, p.tiles.M, p.tiles.N, p.tiles.Splits,
			u, 2*float64(gemmT*p.w.out*p.w.in)/u/1e6, e, kernel)
	}
}

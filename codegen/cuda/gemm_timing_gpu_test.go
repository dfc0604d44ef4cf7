package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
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
	r := rand.New(rand.NewPCG(34, 36))
	gpu, err := passes.GPUTarget("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	g := ir.New()
	g.Attrs["max_tokens"] = int64(gemmT)
	man := &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model:  plans.Model{Name: "gemm_timing", Arch: "gemm_timing", NLayer: 1, ContextLength: 2 * gemmT},
		Memory: plans.Memory{MaxTokens: gemmT}}
	data := map[string][]byte{}
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	tables := map[int64][]float32{} // by row length: [gemmT, in]
	xs := map[int64]*ir.Node{}
	x := func(in int64) *ir.Node {
		if xs[in] == nil {
			tables[in] = randomTable(r, int(in))
			name := fmt.Sprintf("table%d", in)
			data[name] = f32Bytes(tables[in])
			man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: "f32", Shape: []int64{gemmT, in}, Bytes: 4 * gemmT * in})
			w := g.Add(ir.OpWeight, ir.F32, ir.Shape{gemmT, in}, map[string]any{"name": name})
			xs[in] = g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, in}, nil, w, tok)
		}
		return xs[in]
	}
	type product struct {
		shape, form string
		w           *gemmWeight
		y           *ir.Node
		tiles       passes.GEMMTiles
	}
	var prods []*product
	for _, sh := range gemmTimingShapes {
		for _, gt := range sh.types {
			dt, _ := ir.ParseDType(strings.ToLower(gt.String()))
			w := randomWeight(t, r, "", gt, dt, sh.out, sh.in, gemmTimingSlab)
			for _, form := range []string{"split", "whole"} {
				name := fmt.Sprintf("w%d", len(prods))
				data[name] = w.data
				man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: dt.String(), Shape: []int64{sh.out, sh.in}, Bytes: int64(len(w.data))})
				wn := g.Add(ir.OpWeight, dt, ir.Shape{sh.out, sh.in}, map[string]any{"name": name})
				p := &product{shape: sh.name, form: form, w: w}
				p.y = g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, sh.out}, nil, x(sh.in), wn)
				g.Outputs = append(g.Outputs, p.y)
				prods = append(prods, p)
			}
		}
	}
	before := slices.Clone(g.Outputs)
	runGPUPasses(t, g, man)
	for _, p := range prods {
		p.y = g.Outputs[slices.Index(before, p.y)] // the passes may have replaced nodes
		p.tiles = passes.GEMMTiles{M: p.y.Int("gemm_tile_m"), N: p.y.Int("gemm_tile_n"), Splits: p.y.Int("gemm_splits")}
		if p.form == "whole" {
			p.tiles = gpu.WholeKTiles(gemmT, p.w.out)
			p.y.Attrs["gemm_tile_m"], p.y.Attrs["gemm_tile_n"], p.y.Attrs["gemm_splits"] = p.tiles.M, p.tiles.N, p.tiles.Splits
		}
	}
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	man.Graph = ir.Print(g)
	lo, hi := outputSpan(g, gemmT)
	man.Model.Vocab = int((hi - lo) / 4)
	kernelOf := map[int64]string{} // by y's arena offset
	dir := writeEditedPlan(t, g, man, func(name string) []byte { return data[name] }, func(k *plans.Kernels) {
		k.Logits = lo
		for _, l := range k.Prefill {
			if strings.HasPrefix(l.Kernel, "gemm_linear_") {
				kernelOf[l.Args[2].Offset] = l.Kernel // w, x, y, ...
			}
		}
	})

	got, us := profiledSteps(t, dir, 2*gemmT, gemmT)
	t.Logf("%-18s %-5s %-5s %-13s %9s %8s %9s  %s", "product", "type", "form", "tiles", "µs", "TFLOP/s", "rel_err", "kernel")
	for _, p := range prods {
		off := (p.y.Attrs["offset"].(int64) - lo) / 4
		e := relErr64(got[off:off+gemmT*p.w.out], gemmRef(tables[p.w.in], p.w))
		if e > gemmTolerance {
			t.Errorf("%s %s %s: relative error %.2e", p.shape, p.w.gt, p.form, e)
		}
		kernel := kernelOf[p.y.Attrs["offset"].(int64)]
		u := us[kernel]
		t.Logf("%-18s %-5s %-5s %3d×%3d / %-3d %9.1f %8.1f %9.1e  %s", p.shape, p.w.gt, p.form, p.tiles.M, p.tiles.N, p.tiles.Splits,
			u, 2*float64(gemmT*p.w.out*p.w.in)/u/1e6, e, kernel)
	}
}

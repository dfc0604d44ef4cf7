package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// TestGPULinearSlabs runs the decode linears of slabShapes that take
// linear_mmas (the downs of Llama-3.1-8B and Qwen3-8B;
// Q4_K, Q5_K, Q6_K) against a float64 reference: random 64-row slabs tiled
// to the rows, x an embedding's output (no codes: each warp quantizes its
// slabs). ORC_SLAB_SHAPES (names, comma-separated, e.g. "llama-3.1-8b
// down") selects shapes, ORC_GEMV_TYPES types. With ORC_GPU_BENCH=1 it times each beside today's
// linear_q8 on the same shape (the node's recorded kernel set back to q8
// after the passes): µs a launch, (t₈ − t₁)/7 over plans of 8 and 1
// linears of distinct weights (TestGPUGEMV's method), and the step of one
// (embed, linear; linear_q8's with its quantize_x8 launch, as a down after
// swiglu_mma has); ORC_SLAB_VARIANTS adds other geometries (slabVariants).
func TestGPULinearSlabs(t *testing.T) {
	gpuOnly(t)
	bench := os.Getenv("ORC_GPU_BENCH") == "1"
	r := rand.New(rand.NewPCG(13, 14))
	const slab, tok = 64, 1
	if bench {
		t.Logf("%-22s %-5s %10s %12s %12s %12s %12s", "shape", "type", "bytes", "mmas µs", "q8 µs", "mmas step", "q8 step")
	}
	for _, s := range slabShapes {
		if only := os.Getenv("ORC_SLAB_SHAPES"); only != "" && !slices.Contains(strings.Split(only, ","), s.name) {
			continue
		}
		for _, dt := range slabTypes {
			gt, _ := gguf.TypeByName(dt.String())
			if s.stages[dt] == 0 || !gemvTypeSelected(gt) {
				continue
			}
			rows, deq := randomSlab(t, r, gt, slab*int(s.in))
			weight := tile(rows, int(s.out)/slab)
			table := make([]float32, 4*s.in)
			for i := range table {
				table[i] = float32(r.NormFloat64())
			}
			data := func(name string) []byte {
				if name == "table" {
					return f32Bytes(table)
				}
				return weight
			}
			want := make([]float32, s.out)
			x := table[tok*s.in : (tok+1)*s.in]
			for o := range want {
				var sum float64
				for i, w := range deq[(o%slab)*int(s.in) : (o%slab+1)*int(s.in)] {
					sum += float64(w) * float64(x[i])
				}
				want[o] = float32(sum)
			}
			run := func(k int, q8 bool) (time.Duration, []float32) {
				g, man := slabGraph(t, dt, k, s.out, s.in)
				if q8 {
					linearQ8Again(g, man)
				}
				dev := openGPUPlan(t, g, man, 16, data)
				defer dev.Close()
				return timeDecode(t, dev, tok+1, tok)
			}
			step, got := run(1, false)
			e := relErr(got, want)
			if e > gemvTolerance(gt) {
				t.Errorf("%s %s: linear_mmas relative error %.2e", s.name, gt, e)
			}
			if !bench {
				t.Logf("%-22s %-5s relative error %.1e", s.name, gt, e)
				continue
			}
			step8, _ := run(8, false)
			q8Step, q8Got := run(1, true)
			q8Step8, _ := run(8, true)
			mmas, q8 := (step8-step)/7, (q8Step8-q8Step)/7
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
			t.Logf("%-22s %-5s %10d %12.2f %12.2f %12.2f %12.2f   (error %.1e, linear_q8's %.1e)", s.name, gt, len(weight), us(mmas), us(q8), us(step), us(q8Step), e, relErr(q8Got, want))
			for _, v := range slabVariants(t, gt) {
				var times [2]time.Duration
				var vGot []float32
				for i, k := range []int{1, 8} {
					g, man := slabGraph(t, dt, k, s.out, s.in)
					v.apply(g, man, gt)
					dev := openGPUPlan(t, g, man, 16, data)
					times[i], vGot = timeDecode(t, dev, tok+1, tok)
					dev.Close()
				}
				t.Logf("%-22s %-5s %d warps, %d stages: %.2f µs a launch, step %.2f (error %.1e)", s.name, gt, v.nw, v.stages, us((times[1]-times[0])/7), us(times[0]), relErr(vGot, want))
			}
		}
	}
}

// linearQ8Again sets g's decode linears that the passes put on linear_mmas
// back on linear_q8, as the passes choose it without the tensor-core
// kernel: kernel q8 without the stream's records, no late start (nor the
// launch before it letting it start at its end); codegen then quantizes x
// first (quantize_x8), as the scratch does not hold it.
func linearQ8Again(g *ir.Graph, man *plans.Manifest) {
	for _, n := range g.Nodes {
		delete(n.Attrs, "launch_at_end")
		if n.Op == ir.OpLinear && n.Str("kernel") == ir.KernelMMA {
			n.Attrs["kernel"] = ir.KernelQ8
			for _, k := range []string{"mma_warps", "mma_upw", "mma_slab", "mma_stages", "stream_smem", "stream_blocks", "starts_late"} {
				delete(n.Attrs, k)
			}
		}
	}
	man.Graph = ir.Print(g)
}

// TestGPUSlabsMatchCPU is TestGPUFullPresetsMatchCPU for models whose
// decode downs take linear_mmas, in llama.cpp's Q4_K_M: Llama-3.1-8B cut to
// 2 layers (layer 0's down Q4_K, layer 1's Q6_K: use_more_bits; each
// quantizes its slabs of the SwiGLU's f32 output), Qwen3-8B cut to 1, and
// Phi-3-mini cut to 2, whose downs add the residual and write the
// add_rmsnorm's sum that the next qkv_mma's folded norm reads.
func TestGPUSlabsMatchCPU(t *testing.T) {
	gpuOnly(t)
	matchCPU(t, []agreeConfig{
		{preset: "llama-3.1-8b", layers: 2, quant: synth.QuantQ4KM},
		{preset: "qwen3-8b", layers: 1, quant: synth.QuantQ4KM},
		{preset: "phi-3-mini-4k", layers: 2, quant: synth.QuantQ4KM},
	}, agreeTolerance)
}

// slabVariant is a linear_mmas geometry other than the pass's, timed beside
// it: nw warps (a slab of nw super-blocks) and stages stages.
type slabVariant struct{ nw, stages int64 }

// slabVariants are ORC_SLAB_VARIANTS' geometries ("8x3,4x8": warps x
// stages) that weights of type gt can take: a Q6_K slab's 2-byte scales
// are whole 16-byte units only in slabs of 8 super-blocks.
func slabVariants(t *testing.T, gt gguf.Type) []slabVariant {
	var vs []slabVariant
	for _, f := range strings.Split(os.Getenv("ORC_SLAB_VARIANTS"), ",") {
		if f == "" {
			continue
		}
		var v slabVariant
		if _, err := fmt.Sscanf(f, "%dx%d", &v.nw, &v.stages); err != nil {
			t.Fatalf("ORC_SLAB_VARIANTS %q: want warps x stages, as 8x3", f)
		}
		if gt != gguf.Q6_K || v.nw%8 == 0 {
			vs = append(vs, v)
		}
	}
	return vs
}

// apply records the variant's geometry on g's linear_mmas nodes (the
// pass's records, edited as the pass would write them).
func (v slabVariant) apply(g *ir.Graph, man *plans.Manifest, gt gguf.Type) {
	for _, n := range g.Nodes {
		if n.Op == ir.OpLinear && n.Str("kernel") == ir.KernelMMA {
			n.Attrs["mma_warps"], n.Attrs["mma_slab"], n.Attrs["mma_stages"] = v.nw, 256*v.nw, v.stages
			n.Attrs["stream_smem"] = v.stages * 16 * v.nw * gt.RowBytes(256)
		}
	}
	man.Graph = ir.Print(g)
}

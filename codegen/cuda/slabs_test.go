package cuda_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// slabShape is a decode linear of the full-size presets, [out, in], and the
// geometry the chooseKernels pass gives it on an sm_90 (passes.LinearSlabs):
// linear_mmas' warps and its stages a type, none where it keeps
// linear_q8.
type slabShape struct {
	name    string
	out, in int64
	warps   int64
	stages  map[ir.DType]int64
}

// slabShapes: Llama-3.1-8B's down and o-proj (Qwen3-8B's o-proj is the
// same), Qwen3-8B's down, Gemma-3-4B's down and o-proj. Llama's and
// Qwen3's downs take 8 warps (slabs of 8 super-blocks: 7 and 6 a tile)
// in 3 stages, 18,432 bytes a stage of Q4_K, 22,528 of Q5_K, 26,880 of
// Q6_K; Gemma's down (5 slabs a tile) and the o-projs (2 and 1) keep
// linear_q8.
var slabShapes = []slabShape{
	{"llama-3.1-8b down", 4096, 14336, 8, map[ir.DType]int64{ir.Q4_K: 3, ir.Q5_K: 3, ir.Q6_K: 3}},
	{"llama-3.1-8b o-proj", 4096, 4096, 0, nil},
	{"qwen3-8b down", 4096, 12288, 8, map[ir.DType]int64{ir.Q4_K: 3, ir.Q5_K: 3, ir.Q6_K: 3}},
	{"gemma-3-4b down", 2560, 10240, 0, nil},
	{"gemma-3-4b o-proj", 2560, 2048, 0, nil},
}

var slabTypes = []ir.DType{ir.Q4_K, ir.Q5_K, ir.Q6_K}

// slabLaunch is the decode launch of the linear in out's schedule.
func slabLaunch(t *testing.T, out *cuda.Output) plans.Launch {
	t.Helper()
	for _, l := range out.Kernels.Decode {
		if strings.HasPrefix(l.Kernel, "linear_mmas") || strings.HasPrefix(l.Kernel, "linear_q8") {
			return l
		}
	}
	t.Fatal("no linear launch in the decode schedule")
	return plans.Launch{}
}

// slabGraph is gemvGraph's one linear [out, in] of dt over an embedding's
// output, its weight tiled from slab rows.
func slabGraph(t *testing.T, dt ir.DType, k int, out, in int64) (*ir.Graph, *plans.Manifest) {
	gt, _ := gguf.TypeByName(dt.String())
	return gemvGraph(t, dt, k, out, in, out*gt.RowBytes(in))
}

// TestLinearSlabs: the decode linears of the full-size presets take
// linear_mmas in the geometry the pass records (dumped on the node,
// printed by codegen as the launch's warps, grid and stages), with no
// quantize_x8 launch (the embedding writes no codes: each warp quantizes
// its slabs), or keep linear_q8 where a block would have too few slabs;
// Llama's down compiles for sm_80 (cp.async) and sm_90.
func TestLinearSlabs(t *testing.T) {
	for _, s := range slabShapes {
		for _, dt := range slabTypes {
			t.Run(fmt.Sprintf("%s %s", s.name, dt), func(t *testing.T) {
				g, man := slabGraph(t, dt, 1, s.out, s.in)
				out, err := cuda.Generate(g, man, cuda.Options{})
				if err != nil {
					t.Fatal(err)
				}
				l := slabLaunch(t, out)
				var n *ir.Node
				for _, m := range g.Nodes {
					if m.Op == ir.OpLinear {
						n = m
					}
				}
				if s.stages[dt] == 0 {
					if n.Str("kernel") != ir.KernelQ8 || !strings.HasPrefix(l.Kernel, "linear_q8") {
						t.Fatalf("kernel %s, launch %s: want linear_q8", n.Str("kernel"), l.Kernel)
					}
					return
				}
				gt, _ := gguf.TypeByName(dt.String())
				stage := 16 * s.warps * gt.RowBytes(256)
				want := fmt.Sprintf("kernel=\"mma\" mma_warps=%d mma_upw=1 mma_slab=%d mma_stages=%d stream_smem=%d stream_blocks=%d",
					s.warps, 256*s.warps, s.stages[dt], s.stages[dt]*stage, min(s.out/16, 264))
				for _, a := range strings.Fields(want) {
					if !strings.Contains(ir.Print(g), a) {
						t.Errorf("graph lacks %s (want %s)", a, want)
					}
				}
				if !strings.HasPrefix(l.Kernel, "linear_mmas") || l.Block[0] != int(32*s.warps) || l.GridB[0] != min(s.out/16, 264) || l.Smem != int(s.stages[dt]*stage) {
					t.Errorf("launch %s: %d threads, %d blocks, %d bytes of stages; want linear_mmas, %s", l.Kernel, l.Block[0], l.GridB[0], l.Smem, want)
				}
				for _, d := range out.Kernels.Decode {
					if strings.HasPrefix(d.Kernel, "quantize_x8") {
						t.Errorf("decode launches %s: linear_mmas quantizes its own slabs", d.Kernel)
					}
				}
				if s.name == "llama-3.1-8b down" {
					compiles(t, out.Source)
				}
			})
		}
	}
}

// TestPresetLinearSlabs: in the full-size presets' decode step (Q4_K_M,
// real widths, 2 layers: one Q4_K and one Q6_K down under use_more_bits),
// the downs run linear_mmas, the o-projs linear_q8 (too few slabs a
// block), and no quantize_x8 launch is left (the downs quantize their
// slabs; the o-proj reads the attention's codes): Qwen3-8B (Llama-3.1-8B's
// shapes, TestLinearSlabs: a file of zeros has no RoPE frequency factors)
// and Gemma-3-4B, whose downs (5 slabs a block) keep linear_q8 after a
// quantize_x8.
func TestPresetLinearSlabs(t *testing.T) {
	for _, c := range []struct {
		preset      string
		mmas, q8    int // decode launches of linear_mmas, and of linear_q8 besides the LM head
		quantizeX8s int
	}{
		{"qwen3-8b", 2, 2, 0},
		{"gemma-3-4b", 0, 4, 2},
	} {
		t.Run(c.preset, func(t *testing.T) {
			path := writeShapes(t, c.preset, 2, synth.QuantQ4KM)
			g, man, _ := lowerFor(t, path, fullWidthMaxTokens, cuda.DefaultArch)
			out := generate(t, g, man, cuda.DefaultArch)
			var mmas, q8, quant int
			for _, l := range out.Kernels.Decode {
				switch {
				case strings.HasPrefix(l.Kernel, "linear_mmas"):
					mmas++
				case strings.HasPrefix(l.Kernel, "linear_q8"):
					q8++
				case strings.HasPrefix(l.Kernel, "quantize_x8"):
					quant++
				}
			}
			if mmas != c.mmas || q8-1 != c.q8 || quant != c.quantizeX8s {
				t.Errorf("decode launches %d linear_mmas, %d linear_q8 besides the head, %d quantize_x8; want %d, %d, %d", mmas, q8-1, quant, c.mmas, c.q8, c.quantizeX8s)
			}
		})
	}
}

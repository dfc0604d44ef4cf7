package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// Gemma-3-4B's feed-forward, 2560 → 2 × 10240, gated by tanh-GELU.
const gateF, gateIn = 10240, 2560

// gateTypes take the gated families' decode kernels: swiglu_mma (Q4_K,
// Gemma's Q4_K_M gate and up), swiglu_q8 (Q6_K) and swiglu_gemv (F16).
var gateTypes = []ir.DType{ir.Q4_K, ir.Q6_K, ir.F16}

// geluGateGraph is x = embed(table, tokens); y = geglu(linear(x, wg),
// linear(x, wu)), wg and wu [gateF, gateIn] of dtype dt, which the passes
// fuse into swiglu_linear{act="gelu_tanh"}; the logits are last(y).
func geluGateGraph(t *testing.T, dt ir.DType) (*ir.Graph, *plans.Manifest) {
	t.Helper()
	gt, _ := gguf.TypeByName(dt.String())
	g, x, man := tableGraph("geglu", gateIn, gateF)
	sh := ir.Shape{ir.T, gateF}
	var proj []*ir.Node
	for _, w := range []string{"wg", "wu"} {
		wn := g.Add(ir.OpWeight, dt, ir.Shape{gateF, gateIn}, map[string]any{"name": w})
		proj = append(proj, g.Add(ir.OpLinear, ir.F32, sh, nil, x, wn))
		man.Tensors = append(man.Tensors, plans.Tensor{Name: w, DType: dt.String(), Shape: []int64{gateF, gateIn}, Bytes: gateF * gt.RowBytes(gateIn)})
	}
	y := g.Add(ir.OpGEGLU, ir.F32, sh, nil, proj...)
	g.Outputs = []*ir.Node{g.Add(ir.OpLast, ir.F32, ir.Shape{1, gateF}, nil, y)}
	runGPUPasses(t, g, man)
	return g, man
}

// gateLaunches returns the decode and prefill launches of out's gated FFN
// (the swiglu families), failing unless each is one launch that takes the
// tanh-GELU gate.
func gateLaunches(t *testing.T, out *cuda.Output) (decode, prefill plans.Launch) {
	t.Helper()
	pick := func(what string, ls []plans.Launch) plans.Launch {
		var found []plans.Launch
		for _, l := range ls {
			if strings.Contains(l.Kernel, "swiglu") {
				found = append(found, l)
			}
		}
		if len(found) != 1 || !strings.HasSuffix(found[0].Kernel, "_GateGELUTanh") {
			t.Fatalf("%s: gated launches %v, want one ending in _GateGELUTanh", what, found)
		}
		return found[0]
	}
	return pick("decode", out.Kernels.Decode), pick("prefill", out.Kernels.Prefill)
}

// TestGELUGateFused: Gemma's tanh-GELU gated FFN becomes one swiglu_linear
// recording act="gelu_tanh", which codegen emits as one gated launch a
// schedule taking GateGELUTanh (no geglu_ew, no separate gate and up
// launches), and the source compiles with nvcc for sm_80 and sm_90.
func TestGELUGateFused(t *testing.T) {
	for _, dt := range gateTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g, man := geluGateGraph(t, dt)
			var fused []*ir.Node
			for _, n := range g.Nodes {
				if n.Op == ir.OpGEGLU || n.Op == ir.OpLinear {
					t.Errorf("%%%d %s left unfused", n.ID, n.Op)
				}
				if n.Op == ir.OpSwiGLULinear {
					fused = append(fused, n)
				}
			}
			if len(fused) != 1 || fused[0].GateAct() != ir.GateGELUTanh {
				t.Fatalf("swiglu_linear nodes %d, want one with act=gelu_tanh:\n%s", len(fused), ir.Print(g))
			}
			out, err := cuda.Generate(g, man, cuda.Options{})
			if err != nil {
				t.Fatal(err)
			}
			d, p := gateLaunches(t, out)
			for _, l := range append(out.Kernels.Decode, out.Kernels.Prefill...) {
				if strings.HasPrefix(l.Kernel, "geglu_ew") || strings.HasPrefix(l.Kernel, "linear_") {
					t.Errorf("launch %s beside the fused gate", l.Kernel)
				}
			}
			t.Logf("decode %s, prefill %s", d.Kernel, p.Kernel)
			compiles(t, out.Source)
		})
	}
}

package passes

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// moeBeforeLast is tokens → embed → moe (gpt-oss's form: biases, experts
// of dtype gate, up and down) → last, run through the GPU pipeline.
func moeBeforeLast(t *testing.T, gate, down ir.DType) (*ir.Graph, *ir.Node) {
	t.Helper()
	const d, f, e = 512, 256, 8
	g := ir.New()
	g.Attrs["max_tokens"] = int64(64)
	w := func(name string, dt ir.DType, shape ir.Shape) *ir.Node {
		return g.Add(ir.OpWeight, dt, shape, map[string]any{"name": name})
	}
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	x := g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, d}, nil, w("table", ir.F32, ir.Shape{16, d}), tok)
	moe := g.Add(ir.OpMoE, ir.F32, ir.Shape{ir.T, d}, map[string]any{"experts": int64(e), "top_k": int64(2), "limit": 7.0, "alpha": 1.702}, x,
		w("router", ir.F32, ir.Shape{e, d}), w("router_b", ir.F32, ir.Shape{e}),
		w("gate", gate, ir.Shape{e, f, d}), w("gate_b", ir.F32, ir.Shape{e, f}),
		w("up", gate, ir.Shape{e, f, d}), w("up_b", ir.F32, ir.Shape{e, f}),
		w("down", down, ir.Shape{e, d, f}), w("down_b", ir.F32, ir.Shape{e, d}))
	g.Outputs = []*ir.Node{g.Add(ir.OpLast, ir.F32, ir.Shape{1, d}, nil, moe)}
	if err := Run(g, Options{Target: "sm_90", Verify: true}); err != nil {
		t.Fatal(err)
	}
	return g, moe
}

// TestMoEBatchDecodeKernel: an MoE before the last row takes the tensor
// cores over a batched decode step's slots (batch_decode_kernel
// mma_tokens) where its experts have MmaT fragments: MXFP4 in its GPU
// layout, K-quants; MXFP4 left in GGUF order (no fragments for its 17-byte
// blocks) and f16 experts keep the prefill's GEMMs. Its own decode and
// prefill kernels stay q8 (or gemv) and gemm.
func TestMoEBatchDecodeKernel(t *testing.T) {
	for _, c := range []struct {
		gate, down ir.DType
		want       string
	}{
		{ir.MXFP4, ir.MXFP4, ir.KernelMMATokens},
		{ir.Q4_K, ir.Q6_K, ir.KernelMMATokens},
		{ir.F16, ir.F16, ir.KernelGEMM},
	} {
		g, moe := moeBeforeLast(t, c.gate, c.down)
		if got := moe.Str("batch_decode_kernel"); got != c.want {
			t.Errorf("%s/%s experts: batch_decode_kernel %q, want %q", c.gate, c.down, got, c.want)
		}
		if moe.Str("prefill_kernel") != ir.KernelGEMM {
			t.Errorf("%s/%s experts: prefill_kernel %q", c.gate, c.down, moe.Str("prefill_kernel"))
		}
		if c.gate != ir.MXFP4 {
			continue
		}
		for _, n := range g.Nodes {
			if n.Op == ir.OpWeight && n.DType == ir.MXFP4 {
				delete(n.Attrs, "layout")
			}
		}
		if err := chooseKernels(g); err != nil {
			t.Fatal(err)
		}
		if got := moe.Str("batch_decode_kernel"); got != ir.KernelGEMM {
			t.Errorf("MXFP4 experts in GGUF order: batch_decode_kernel %q, want gemm", got)
		}
	}
}

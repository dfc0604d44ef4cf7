package cpu

import (
	"fmt"
	"testing"

	"github.com/llama-orch/orc/ir"
)

// The fused ops must compute exactly what the unfused chains they replace
// compute (up to float32 rounding).
func TestFusedMatchUnfused(t *testing.T) {
	const d, heads, kvHeads, hd, ff = 64, 4, 2, 16, 96
	h := newHarness(4)
	x := h.act(t, "x", d)
	wq, wk, wv := h.weight(t, "wq", ir.Q8_0, 0.3, heads*hd, d), h.weight(t, "wk", ir.F16, 0.3, kvHeads*hd, d), h.weight(t, "wv", ir.F32, 0.3, kvHeads*hd, d)
	bq, bk, bv := h.weight(t, "bq", ir.F32, 1, heads*hd), h.weight(t, "bk", ir.F32, 1, kvHeads*hd), h.weight(t, "bv", ir.F32, 1, kvHeads*hd)
	ropeAttrs := func(nh int64) map[string]any {
		return map[string]any{"heads": nh, "head_dim": int64(hd), "rot_dim": int64(12), "base": 1e6, "mode": "neox"}
	}
	q := h.add(ir.OpRoPE, ir.Shape{ir.T, heads * hd}, ropeAttrs(heads), h.add(ir.OpLinear, ir.Shape{ir.T, heads * hd}, nil, x, wq, bq), h.positions)
	k := h.add(ir.OpRoPE, ir.Shape{ir.T, kvHeads * hd}, ropeAttrs(kvHeads), h.add(ir.OpLinear, ir.Shape{ir.T, kvHeads * hd}, nil, x, wk, bk), h.positions)
	v := h.add(ir.OpLinear, ir.Shape{ir.T, kvHeads * hd}, nil, x, wv, bv)
	qkv := h.add(ir.OpQKV, ir.Shape{ir.T, (heads + 2*kvHeads) * hd}, map[string]any{
		"parts": []int64{heads * hd, kvHeads * hd, kvHeads * hd}, "rope_mode": "neox", "heads": int64(heads),
		"kv_heads": int64(kvHeads), "head_dim": int64(hd), "rot_dim": int64(12), "base": 1e6,
	}, x, wq, wk, wv, bq, bk, bv, h.positions)
	views := make([]*ir.Node, 3)
	for i, c := range []int64{heads * hd, kvHeads * hd, kvHeads * hd} {
		views[i] = h.add(ir.OpView, ir.Shape{ir.T, c}, map[string]any{"part": int64(i)}, qkv)
	}

	wg, wu := h.weight(t, "wg", ir.Q4_0, 0.3, ff, d), h.weight(t, "wu", ir.Q4_0, 0.3, ff, d)
	wgu := h.weight(t, "wgu", ir.Q5_0, 0.3, 2*ff, d)
	sh := ir.Shape{ir.T, ff}
	swi := h.add(ir.OpSwiGLU, sh, nil, h.add(ir.OpLinear, sh, nil, x, wg), h.add(ir.OpLinear, sh, nil, x, wu))
	swiFused := h.add(ir.OpSwiGLULinear, sh, nil, x, wg, wu)
	packed := h.add(ir.OpSwiGLU, sh, nil, h.add(ir.OpLinear, ir.Shape{ir.T, 2 * ff}, nil, x, wgu))
	packedFused := h.add(ir.OpSwiGLULinear, sh, nil, x, wgu)
	geglu := h.add(ir.OpGEGLU, sh, nil, h.add(ir.OpLinear, sh, nil, x, wg), h.add(ir.OpLinear, sh, nil, x, wu))
	gegluFused := h.add(ir.OpSwiGLULinear, sh, map[string]any{"act": string(ir.GateGELUTanh)}, x, wg, wu)

	// Gemma's post-norm: add_rmsnorm(x, rmsnorm(y, wb), w) and its fusion.
	y, wb, wn := h.act(t, "y", d), h.weight(t, "wb", ir.F32, 1, d), h.weight(t, "wn", ir.F32, 1, d)
	normAttrs := map[string]any{"eps": 1e-6, "parts": []int64{d, d}}
	post := h.add(ir.OpAddRMSNorm, ir.Shape{ir.T, 2 * d}, normAttrs, x, h.add(ir.OpRMSNorm, ir.Shape{ir.T, d}, map[string]any{"eps": 1e-6}, y, wb), wn)
	postFused := h.add(ir.OpAddPostNorm, ir.Shape{ir.T, 2 * d}, normAttrs, x, y, wb, wn)
	var postParts, postFusedParts [2]*ir.Node
	for i := range 2 {
		part := map[string]any{"part": int64(i)}
		postParts[i] = h.add(ir.OpView, ir.Shape{ir.T, d}, part, post)
		postFusedParts[i] = h.add(ir.OpView, ir.Shape{ir.T, d}, part, postFused)
	}

	pr := h.build(t, gegluFused)
	for _, tokens := range [][]int32{stepTokens, {9}} {
		get := func(n *ir.Node) []float64 { return f64(runStep(t, pr, nil, tokens, 4, n.ID)) }
		near(t, "qkv q", runStep(t, pr, nil, tokens, 4, views[0].ID), get(q)[:len(tokens)*heads*hd], 1e-5)
		near(t, "qkv k", runStep(t, pr, nil, tokens, 4, views[1].ID), get(k)[:len(tokens)*kvHeads*hd], 1e-5)
		near(t, "qkv v", runStep(t, pr, nil, tokens, 4, views[2].ID), get(v)[:len(tokens)*kvHeads*hd], 1e-5)
		near(t, "swiglu_linear", runStep(t, pr, nil, tokens, 4, swiFused.ID), get(swi)[:len(tokens)*ff], 1e-5)
		near(t, "swiglu_linear packed", runStep(t, pr, nil, tokens, 4, packedFused.ID), get(packed)[:len(tokens)*ff], 1e-5)
		for i, v := range postFusedParts {
			near(t, fmt.Sprintf("add_post_rmsnorm part %d", i), runStep(t, pr, nil, tokens, 4, v.ID), get(postParts[i])[:len(tokens)*d], 0)
		}
		near(t, "swiglu_linear tanh-GELU", runStep(t, pr, nil, tokens, 4, gegluFused.ID), get(geglu)[:len(tokens)*ff], 1e-5)
	}
}

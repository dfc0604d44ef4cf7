package cpu

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/ir"
)

// rowRange adds a weight node reading rows [first, first+count) of w's tensor.
func (h *harness) rowRange(w *ir.Node, first, count int64) *ir.Node {
	shape := append(ir.Shape{count}, w.Shape[1:]...)
	return h.g.Add(ir.OpWeight, w.DType, shape, map[string]any{"name": w.Str("name"), "rows": []int64{first, count}})
}

// A qkv over row ranges of one packed weight and bias (fuseQKV's form of
// phi3's and gpt2's attn_qkv) computes what the packed linear and its split
// compute.
func TestRowRangeWeights(t *testing.T) {
	const d, dq, dkv = 64, 64, 32
	h := newHarness(4)
	x := h.act(t, "x", d)
	w := h.weight(t, "attn_qkv.weight", ir.Q8_0, 0.3, dq+2*dkv, d) // [q+k+v][d]
	b := h.weight(t, "attn_qkv.bias", ir.F32, 1, dq+2*dkv)         // [q+k+v]
	parts := []int64{dq, dkv, dkv}
	split := h.add(ir.OpSplit, ir.Shape{ir.T, dq + 2*dkv}, map[string]any{"parts": parts},
		h.add(ir.OpLinear, ir.Shape{ir.T, dq + 2*dkv}, nil, x, w, b))
	qkv := h.add(ir.OpQKV, ir.Shape{ir.T, dq + 2*dkv}, map[string]any{"parts": parts}, x,
		h.rowRange(w, 0, dq), h.rowRange(w, dq, dkv), h.rowRange(w, dq+dkv, dkv),
		h.rowRange(b, 0, dq), h.rowRange(b, dq, dkv), h.rowRange(b, dq+dkv, dkv))
	pr := h.build(t, qkv)
	for _, tokens := range [][]int32{stepTokens, {9}} {
		want := f64(runStep(t, pr, nil, tokens, 4, split.ID))
		near(t, "qkv of row ranges", runStep(t, pr, nil, tokens, 4, qkv.ID), want, 1e-5)
	}
}

// A row range outside its tensor is refused when the plan is bound.
func TestRowRangeOutsideTensor(t *testing.T) {
	h := newHarness(4)
	x := h.act(t, "x", 64)
	w := h.weight(t, "attn_qkv.weight", ir.F16, 0.3, 96, 64)
	h.g.Nodes = h.g.Nodes[:len(h.g.Nodes)-1] // only the range below reads the tensor
	y := h.add(ir.OpLinear, ir.Shape{ir.T, 32}, nil, x, h.rowRange(w, 80, 32))
	h.g.Outputs = []*ir.Node{h.add(ir.OpLast, ir.Shape{1, 32}, nil, y)}
	p := h.plan(t)
	g, err := ir.Parse(p.Manifest.Graph)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newProgram(p, g, 2)
	if err == nil || !strings.Contains(err.Error(), "rows [80, 112) outside tensor attn_qkv.weight's 96 rows") {
		t.Fatalf("error %v, want the range named", err)
	}
}

package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/llama-orch/orc/ir"
)

// refAttention is attention of one query row over the keys and values of
// positions [first, p], written from the definition.
func refAttention(q []float64, keys, vals [][]float64, p, window, heads, kvHeads, hd int, scale float64, sinks []float32) []float64 {
	out := make([]float64, heads*hd)
	first := 0
	if window > 0 {
		first = max(0, p-window+1)
	}
	for h := range heads {
		kh := h / (heads / kvHeads)
		var logits []float64
		for j := first; j <= p; j++ {
			s := 0.0
			for d := range hd {
				s += q[h*hd+d] * keys[j][kh*hd+d]
			}
			logits = append(logits, s*scale)
		}
		z := 0.0
		if sinks != nil {
			z = math.Exp(float64(sinks[h]))
		}
		for _, l := range logits {
			z += math.Exp(l)
		}
		for i, l := range logits {
			for d := range hd {
				out[h*hd+d] += math.Exp(l) / z * vals[first+i][kh*hd+d]
			}
		}
	}
	return out
}

func TestAttention(t *testing.T) {
	const heads, kvHeads, hd = 4, 2, 8
	for _, c := range []struct {
		window int
		sinks  bool
	}{{0, false}, {2, false}, {0, true}, {3, true}} {
		t.Run(fmt.Sprintf("window%d_sinks%v", c.window, c.sinks), func(t *testing.T) {
			h := newHarness(4)
			q, k, v := h.act(t, "q", heads*hd), h.act(t, "k", kvHeads*hd), h.act(t, "v", kvHeads*hd)
			attrs := map[string]any{"layer": int64(0), "heads": int64(heads), "kv_heads": int64(kvHeads),
				"head_dim": int64(hd), "scale": 1 / math.Sqrt(hd), "window": int64(c.window)}
			inputs := []*ir.Node{q, k, v}
			if c.sinks {
				inputs = append(inputs, h.weight(t, "sinks", ir.F32, 2, heads))
			}
			a := h.add(ir.OpAttention, ir.Shape{ir.T, heads * hd}, attrs, inputs...)
			pr := h.build(t, a)
			kv := newKVCache(pr.kv, 16)
			var keys, vals [][]float64
			// A prefill of three tokens, then two decode steps.
			for _, chunk := range [][]int32{{5, 17, 3}, {40}, {9}} {
				pos0 := len(keys)
				keys = append(keys, h.rowsOf("k", chunk)...)
				vals = append(vals, h.rowsOf("v", chunk)...)
				var want []float64
				for i, qr := range h.rowsOf("q", chunk) {
					want = append(want, refAttention(qr, keys, vals, pos0+i, c.window, heads, kvHeads, hd, 1/math.Sqrt(hd), h.values["sinks"])...)
				}
				near(t, fmt.Sprintf("step at %d", pos0), runStep(t, pr, kv, chunk, pos0, a.ID), want, 1e-5)
			}
		})
	}
}

func TestMoE(t *testing.T) {
	const e, k, d, f = 4, 2, 32, 64
	h := newHarness(4)
	x := h.act(t, "x", d)
	inputs := []*ir.Node{x,
		h.weight(t, "router", ir.F32, 1, e, d), h.weight(t, "router_b", ir.F32, 1, e),
		h.weight(t, "gate", ir.MXFP4, 1, e, f, d), h.weight(t, "gate_b", ir.F32, 1, e, f),
		h.weight(t, "up", ir.MXFP4, 1, e, f, d), h.weight(t, "up_b", ir.F32, 1, e, f),
		h.weight(t, "down", ir.Q8_0, 0.3, e, d, f), h.weight(t, "down_b", ir.F32, 1, e, d),
	}
	// A limit of 2 makes the clamps bite on these values.
	y := h.add(ir.OpMoE, ir.Shape{ir.T, d}, map[string]any{"experts": int64(e), "top_k": int64(k), "limit": 2.0, "alpha": 1.702}, inputs...)
	pr := h.build(t, y)
	val := func(name string) []float32 { return h.values[name] }
	var want []float64
	for _, xr := range h.rowsOf("x", stepTokens) {
		logits := matVec(val("router"), xr)
		for i := range logits {
			logits[i] += float64(val("router_b")[i])
		}
		// Top-2 by sorting indices on logits.
		best, second := 0, -1
		for i := 1; i < e; i++ {
			if logits[i] > logits[best] {
				best, second = i, best
			} else if second < 0 || logits[i] > logits[second] {
				second = i
			}
		}
		z := math.Exp(logits[best]) + math.Exp(logits[second])
		out := make([]float64, d)
		for _, ex := range []int{best, second} {
			g := matVec(val("gate")[ex*f*d:(ex+1)*f*d], xr)
			u := matVec(val("up")[ex*f*d:(ex+1)*f*d], xr)
			hid := make([]float64, f)
			for j := range f {
				gj := math.Min(g[j]+float64(val("gate_b")[ex*f+j]), 2)
				uj := math.Max(math.Min(u[j]+float64(val("up_b")[ex*f+j]), 2), -2)
				hid[j] = (uj + 1) * gj / (1 + math.Exp(-1.702*gj))
			}
			yo := matVec(val("down")[ex*d*f:(ex+1)*d*f], hid)
			for j := range out {
				out[j] += math.Exp(logits[ex]) / z * (yo[j] + float64(val("down_b")[ex*d+j]))
			}
		}
		want = append(want, out...)
	}
	near(t, "moe", runStep(t, pr, nil, stepTokens, 0, y.ID), want, 1e-5)
}

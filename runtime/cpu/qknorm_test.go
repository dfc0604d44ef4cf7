package cpu

import (
	"math"
	"testing"

	"github.com/llama-orch/orc/ir"
)

// The q/k norm, norm_rope, geglu, scale and the scaled RoPE against float64
// formulas written from transformers' modeling code: Qwen3RMSNorm over each
// head, rotate_half (NeoX) with inv_freq = base^(-2i/rot) / factor_i ·
// freq_scale (llama3's divisors, linear scaling), gelu_pytorch_tanh.
func TestQKNormRoPEGEGLUScale(t *testing.T) {
	const heads, hd, rot, eps = 3, 16, 12, 1e-6
	h := newHarness(4)
	x := h.act(t, "x", heads*hd)
	w := h.weight(t, "qn", ir.F32, 1, hd)
	factors := []float64{1, 1, 1.5, 2, 4, 8}
	ropeAttrs := map[string]any{"heads": int64(heads), "head_dim": int64(hd), "rot_dim": int64(rot), "base": 10000.0,
		"mode": "neox", "freq_scale": 0.125, "freq_factors": factors}
	normAttrs := map[string]any{"heads": int64(heads), "head_dim": int64(hd), "eps": eps}
	shape := ir.Shape{ir.T, heads * hd}
	normed := h.add(ir.OpHeadRMSNorm, shape, normAttrs, x, w)
	roped := h.add(ir.OpRoPE, shape, ropeAttrs, normed, h.positions)
	fusedAttrs := map[string]any{"eps": eps}
	for k, v := range ropeAttrs {
		fusedAttrs[k] = v
	}
	fused := h.add(ir.OpNormRoPE, shape, fusedAttrs, x, w, h.positions)
	u := h.act(t, "u", heads*hd)
	geglu := h.add(ir.OpGEGLU, shape, nil, x, u)
	scaled := h.add(ir.OpScale, shape, map[string]any{"factor": math.Sqrt(48)}, x)
	pr := h.build(t, fused)

	tokens, pos0 := []int32{3, 9, 27}, 5
	xs, us, wv := h.rowsOf("x", tokens), h.rowsOf("u", tokens), f64(h.values["qn"])
	var wantNorm, wantRope, wantGEGLU, wantScale []float64
	for ti, row := range xs {
		for hh := 0; hh < heads; hh++ {
			head := row[hh*hd : (hh+1)*hd]
			ss := 0.0
			for _, v := range head {
				ss += v * v
			}
			inv := 1 / math.Sqrt(ss/hd+eps)
			n := make([]float64, hd)
			for d := range n {
				n[d] = head[d] * inv * wv[d]
			}
			wantNorm = append(wantNorm, n...)
			r := append([]float64(nil), n...)
			for i := 0; i < rot/2; i++ {
				theta := float64(pos0+ti) * math.Pow(10000, -2*float64(i)/rot) / factors[i] * 0.125
				a, b := n[i], n[i+rot/2]
				r[i] = a*math.Cos(theta) - b*math.Sin(theta)
				r[i+rot/2] = a*math.Sin(theta) + b*math.Cos(theta)
			}
			wantRope = append(wantRope, r...)
		}
		for c, g := range row {
			wantGEGLU = append(wantGEGLU, 0.5*g*(1+math.Tanh(math.Sqrt(2/math.Pi)*(g+0.044715*g*g*g)))*us[ti][c])
			wantScale = append(wantScale, g*math.Sqrt(48))
		}
	}
	get := func(n *ir.Node) []float32 { return runStep(t, pr, nil, tokens, pos0, n.ID)[:len(tokens)*heads*hd] }
	near(t, "head_rmsnorm", get(normed), wantNorm, 1e-5)
	near(t, "rope with freq_factors and freq_scale", get(roped), wantRope, 1e-5)
	near(t, "norm_rope", get(fused), wantRope, 1e-5)
	near(t, "geglu", get(geglu), wantGEGLU, 1e-5)
	near(t, "scale", get(scaled), wantScale, 1e-6)
}

package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/llama-orch/orc/ir"
)

var stepTokens = []int32{5, 17, 3}

func TestLinear(t *testing.T) {
	for _, c := range []struct {
		dt      ir.DType
		in      int64
		bias    bool
		tol     float64
		nTokens int
	}{
		{ir.F32, 48, true, 1e-5, 3}, {ir.F32, 48, false, 1e-5, 1},
		{ir.F16, 64, true, 1e-5, 1}, {ir.BF16, 64, false, 1e-5, 3},
		{ir.Q8_0, 64, true, 1e-5, 3}, {ir.Q8_0, 64, true, 1e-5, 1},
		{ir.Q4_0, 64, false, 1e-5, 1}, {ir.Q5_0, 64, false, 1e-5, 2},
		{ir.Q4_K, 256, true, 1e-5, 1}, {ir.Q4_K, 256, true, 1e-5, 3},
		{ir.Q6_K, 256, false, 1e-5, 1}, {ir.MXFP4, 64, false, 1e-5, 2},
	} {
		t.Run(fmt.Sprintf("%s_%d_bias%v_T%d", c.dt, c.in, c.bias, c.nTokens), func(t *testing.T) {
			h := newHarness(4)
			x := h.act(t, "x", c.in)
			w := h.weight(t, "w", c.dt, 0.5, 40, c.in)
			inputs := []*ir.Node{x, w}
			if c.bias {
				inputs = append(inputs, h.weight(t, "b", ir.F32, 1, 40))
			}
			y := h.add(ir.OpLinear, ir.Shape{ir.T, 40}, nil, inputs...)
			pr := h.build(t, y)
			tokens := stepTokens[:c.nTokens]
			var want []float64
			for _, r := range h.rowsOf("x", tokens) {
				o := matVec(h.values["w"], r)
				for i := range o {
					if c.bias {
						o[i] += float64(h.values["b"][i])
					}
				}
				want = append(want, o...)
			}
			near(t, "linear", runStep(t, pr, nil, tokens, 0, y.ID), want, c.tol)
		})
	}
}

// refNorm is RMSNorm (bias nil) or LayerNorm of x in float64.
func refNorm(x []float64, w, bias []float32, eps float64) []float64 {
	mean := 0.0
	if bias != nil {
		for _, v := range x {
			mean += v / float64(len(x))
		}
	}
	ss := 0.0
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = (v - mean) / math.Sqrt(ss/float64(len(x))+eps) * float64(w[i])
		if bias != nil {
			out[i] += float64(bias[i])
		}
	}
	return out
}

func TestElementwise(t *testing.T) {
	const c = 24
	h := newHarness(4)
	a, b := h.act(t, "a", c), h.act(t, "b", c)
	w, bias := h.weight(t, "w", ir.F32, 1, c), h.weight(t, "bias", ir.F16, 1, c)
	sh := ir.Shape{ir.T, c}
	sum := h.add(ir.OpAdd, sh, nil, a, b)
	rms := h.add(ir.OpRMSNorm, sh, map[string]any{"eps": 1e-6}, sum, w)
	ln := h.add(ir.OpLayerNorm, sh, map[string]any{"eps": 1e-5}, sum, w, bias)
	addRMS := h.add(ir.OpAddRMSNorm, ir.Shape{ir.T, 2 * c}, map[string]any{"eps": 1e-6, "parts": []int64{c, c}}, a, b, w)
	addRMS1 := h.add(ir.OpView, sh, map[string]any{"part": int64(1)}, addRMS)
	addLN := h.add(ir.OpAddLayerNorm, ir.Shape{ir.T, 2 * c}, map[string]any{"eps": 1e-5, "parts": []int64{c, c}}, a, b, w, bias)
	addLN0 := h.add(ir.OpView, sh, map[string]any{"part": int64(0)}, addLN)
	addLN1 := h.add(ir.OpView, sh, map[string]any{"part": int64(1)}, addLN)
	gl := h.add(ir.OpGELU, sh, nil, a)
	sw := h.add(ir.OpSwiGLU, sh, nil, a, b)
	cat := h.add(ir.OpSplit, ir.Shape{ir.T, c}, map[string]any{"parts": []int64{10, 14}}, a)
	cat1 := h.add(ir.OpView, ir.Shape{ir.T, 14}, map[string]any{"part": int64(1)}, cat)
	packed := h.add(ir.OpSwiGLU, ir.Shape{ir.T, c / 2}, nil, b)
	last := h.add(ir.OpLast, ir.Shape{1, c}, nil, rms)
	pr := h.build(t, last)
	A, B := h.rowsOf("a", stepTokens), h.rowsOf("b", stepTokens)
	var wantSum, wantRMS, wantLN, wantGELU, wantSw, wantCat1, wantPacked []float64
	for r := range A {
		s := make([]float64, c)
		for i := range s {
			s[i] = A[r][i] + B[r][i]
			x := A[r][i]
			wantGELU = append(wantGELU, 0.5*x*(1+math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))))
			wantSw = append(wantSw, x/(1+math.Exp(-x))*B[r][i])
		}
		for i := range c / 2 {
			g := B[r][i]
			wantPacked = append(wantPacked, g/(1+math.Exp(-g))*B[r][c/2+i])
		}
		wantSum = append(wantSum, s...)
		wantRMS = append(wantRMS, refNorm(s, h.values["w"], nil, 1e-6)...)
		wantLN = append(wantLN, refNorm(s, h.values["w"], h.values["bias"], 1e-5)...)
		wantCat1 = append(wantCat1, A[r][10:]...)
	}
	got := func(n *ir.Node) []float32 { return runStep(t, pr, nil, stepTokens, 0, n.ID) }
	near(t, "add", got(sum), wantSum, 1e-6)
	near(t, "rmsnorm", got(rms), wantRMS, 1e-5)
	near(t, "layernorm", got(ln), wantLN, 1e-5)
	near(t, "add_rmsnorm normed", got(addRMS1), wantRMS, 1e-5)
	near(t, "add_layernorm sum", got(addLN0), wantSum, 1e-6)
	near(t, "add_layernorm normed", got(addLN1), wantLN, 1e-5)
	near(t, "gelu", got(gl), wantGELU, 1e-6)
	near(t, "swiglu", got(sw), wantSw, 1e-6)
	near(t, "swiglu packed", got(packed), wantPacked, 1e-6)
	near(t, "split part 1", got(cat1), wantCat1, 0)
	near(t, "last", got(last), wantRMS[2*c:], 1e-5)
}

// refRotate rotates pairs of one head as complex numbers: the straight
// definition, independent of the device's loop.
func refRotate(head []float64, pos float64, invFreq []float64, rotDim int, neox bool, scale float64) {
	for i, f := range invFreq {
		a, b := 2*i, 2*i+1
		if neox {
			a, b = i, i+rotDim/2
		}
		z := complex(head[a], head[b]) * complex(math.Cos(pos*f)*scale, math.Sin(pos*f)*scale)
		head[a], head[b] = real(z), imag(z)
	}
}

func TestRoPE(t *testing.T) {
	const heads, hd = 3, 8
	for _, c := range []struct {
		mode   string
		rotDim int
		yarn   bool
	}{{"normal", 8, false}, {"neox", 8, false}, {"neox", 4, false}, {"normal", 6, false}, {"neox", 8, true}} {
		t.Run(fmt.Sprintf("%s_rot%d_yarn%v", c.mode, c.rotDim, c.yarn), func(t *testing.T) {
			h := newHarness(4)
			x := h.act(t, "x", heads*hd)
			attrs := map[string]any{"heads": int64(heads), "head_dim": int64(hd), "rot_dim": int64(c.rotDim), "base": 10000.0, "mode": c.mode}
			invFreq := make([]float64, c.rotDim/2)
			for i := range invFreq {
				invFreq[i] = math.Pow(10000, -float64(2*i)/float64(c.rotDim))
			}
			scale := 1.0
			if c.yarn {
				// factor 32, original context 64, beta_fast 32,
				// beta_slow 1, truncate false, as transformers'
				// _compute_yarn_parameters: the ramp runs from
				// low = 8·ln(64/(32·2π))/(2 ln 1e4) < 0 → 0 to
				// high = 8·ln(64/(1·2π))/(2 ln 1e4) ≈ 1.008, so pair 0
				// keeps its frequency, pair 1 is nearly all
				// interpolated and pairs 2, 3 are divided by 32.
				attrs["yarn_factor"], attrs["yarn_orig_ctx"] = 32.0, int64(64)
				attrs["yarn_beta_fast"], attrs["yarn_beta_slow"] = 32.0, 1.0
				high := 8 * math.Log(64/(2*math.Pi)) / (2 * math.Log(10000))
				for i := range invFreq {
					ramp := math.Min(math.Max(float64(i)/high, 0), 1)
					invFreq[i] = invFreq[i]/32*ramp + invFreq[i]*(1-ramp)
				}
				scale = 0.1*math.Log(32) + 1
			}
			y := h.add(ir.OpRoPE, ir.Shape{ir.T, heads * hd}, attrs, x, h.positions)
			pr := h.build(t, y)
			const pos0 = 7
			rows := h.rowsOf("x", stepTokens)
			for r, row := range rows {
				for hh := range heads {
					refRotate(row[hh*hd:(hh+1)*hd], float64(pos0+r), invFreq, c.rotDim, c.mode == "neox", scale)
				}
			}
			near(t, "rope", runStep(t, pr, nil, stepTokens, pos0, y.ID), flat(rows), 1e-5)
		})
	}
}

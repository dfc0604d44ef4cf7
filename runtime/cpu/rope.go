package cpu

import (
	"fmt"
	"math"

	"github.com/llama-orch/orc/ir"
)

// rope rotates the first rotDim dims of each head of a [T, heads·headDim]
// activation by position·invFreq[i]. mode "normal" pairs dims (2i, 2i+1),
// "neox" pairs (i, i+rotDim/2). scale multiplies cos and sin (YaRN's
// attention factor; 1 otherwise).
type rope struct {
	neox           bool
	heads, headDim int
	rotDim         int
	invFreq        []float64 // [rotDim/2]
	scale          float64
}

// newRoPE reads the rotation attributes of a rope node (modeKey "mode") or
// a qkv with folded RoPE ("rope_mode") for heads heads.
func newRoPE(n *ir.Node, modeKey string, heads int64) (*rope, error) {
	r := &rope{
		neox:    n.Str(modeKey) == "neox",
		heads:   int(heads),
		headDim: int(n.Int("head_dim")),
		rotDim:  int(n.Int("rot_dim")),
		scale:   1,
	}
	base, dim := n.Float("base"), float64(r.rotDim)
	r.invFreq = make([]float64, r.rotDim/2)
	for i := range r.invFreq {
		r.invFreq[i] = 1 / math.Pow(base, float64(2*i)/dim)
	}
	if factor, ok := n.Attrs["yarn_factor"].(float64); ok && factor != 1 {
		if err := r.yarn(n, factor, base); err != nil {
			return nil, err
		}
	}
	// Llama 3's frequency divisors, and linear scaling (Gemma 3's global
	// layers): transformers divides inv_freq by each.
	if ff, ok := n.Attrs["freq_factors"].([]float64); ok {
		if len(ff) != len(r.invFreq) {
			return nil, fmt.Errorf("%d freq_factors for %d frequencies", len(ff), len(r.invFreq))
		}
		for i, f := range ff {
			r.invFreq[i] /= f
		}
	}
	if s, ok := n.Attrs["freq_scale"].(float64); ok {
		for i := range r.invFreq {
			r.invFreq[i] *= s
		}
	}
	return r, nil
}

// yarn applies YaRN scaling as transformers' _compute_yarn_parameters does
// (the reference for gpt-oss): frequencies whose wavelength fits the
// original context many times (above beta_fast rotations) keep their value,
// those below beta_slow rotations are divided by factor, a linear ramp
// between; cos and sin are scaled by 0.1·ln(factor)+1. The ramp ends are
// not rounded: gpt-oss, the one YaRN model here, sets truncate=false
// (llama.cpp rounds them outward, a ≤ 1-dim shift of the ramp).
func (r *rope) yarn(n *ir.Node, factor, base float64) error {
	origCtx := float64(n.Int("yarn_orig_ctx"))
	betaFast, betaSlow := n.Float("yarn_beta_fast"), n.Float("yarn_beta_slow")
	if factor <= 0 || origCtx <= 0 || betaFast <= 0 || betaSlow <= 0 {
		return fmt.Errorf("YaRN needs positive yarn_factor, yarn_orig_ctx, yarn_beta_fast and yarn_beta_slow; got %g, %g, %g, %g",
			factor, origCtx, betaFast, betaSlow)
	}
	dim := float64(r.rotDim)
	correctionDim := func(rotations float64) float64 {
		return dim * math.Log(origCtx/(rotations*2*math.Pi)) / (2 * math.Log(base))
	}
	low, high := correctionDim(betaFast), correctionDim(betaSlow)
	low, high = max(low, 0), min(high, dim-1)
	if low == high {
		high += 0.001
	}
	for i, f := range r.invFreq {
		ramp := min(max((float64(i)-low)/(high-low), 0), 1)
		extrapolation := 1 - ramp
		r.invFreq[i] = f/factor*(1-extrapolation) + f*extrapolation
	}
	r.scale = 0.1*math.Log(factor) + 1
	return nil
}

// apply rotates x [len(pos), heads·headDim] in place.
func (r *rope) apply(x []float32, pos []int32) {
	half := r.rotDim / 2
	width := r.heads * r.headDim
	for t, p := range pos {
		for i, f := range r.invFreq {
			sin, cos := math.Sincos(float64(p) * f)
			c, s := float32(cos*r.scale), float32(sin*r.scale)
			a, b := 2*i, 2*i+1
			if r.neox {
				a, b = i, i+half
			}
			for h := range r.heads {
				row := x[t*width+h*r.headDim:]
				x0, x1 := row[a], row[b]
				row[a] = x0*c - x1*s
				row[b] = x0*s + x1*c
			}
		}
	}
}

func (pr *program) rope(n *ir.Node) (func(*stepState) error, error) {
	r, err := newRoPE(n, "mode", n.Int("heads"))
	if err != nil {
		return nil, err
	}
	x, out, positions := pr.bufs[n.Inputs[0]], pr.bufs[n], n.Inputs[1]
	return func(st *stepState) error {
		m := rows(n, st.t) * cols(n)
		copy(out[:m], x[:m])
		r.apply(out[:m], st.ints(positions)[:st.t])
		return nil
	}, nil
}

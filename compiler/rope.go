package compiler

import (
	"fmt"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/quant"
)

// rope rotates q or k (heads of head_dim each) of layer i by the
// architecture's RoPE: a sliding-window layer of an architecture with a
// local RoPE takes its base unscaled; every other layer the file's base
// and scaling.
func (l *lowering) rope(i int64, x *ir.Node, heads int64) *ir.Node {
	if x == nil {
		return l.add(ir.OpRoPE, nil, nil, x)
	}
	attrs := map[string]any{
		"heads": heads, "head_dim": l.headDim, "rot_dim": int64(l.h.RopeDims),
		"base": l.h.RopeBase, "mode": l.c.Rope.String(),
	}
	if l.c.LocalRope != nil && l.h.IsSWA(int(i)) {
		attrs["base"] = l.c.LocalRope.Base
		return l.add(ir.OpRoPE, x.Shape, attrs, x, l.positions)
	}
	switch y := l.h.Scaling; y.Type {
	case "yarn":
		attrs["yarn_factor"] = y.Factor
		attrs["yarn_orig_ctx"] = int64(y.OrigCtx)
		attrs["yarn_beta_fast"] = y.BetaFast
		attrs["yarn_beta_slow"] = y.BetaSlow
	case "linear":
		if y.Factor != 1 {
			attrs["freq_scale"] = 1 / y.Factor
		}
	}
	if l.ropeFactors != nil {
		attrs["freq_factors"] = l.ropeFactors
	}
	return l.add(ir.OpRoPE, x.Shape, attrs, x, l.positions)
}

// ropeFactors reads the frequency divisors of a file whose architecture
// declares them (Llama 3's rope_freqs.weight), and refuses RoPE scaling
// the lowering does not apply: lowering without it would silently compute
// another model.
func ropeFactors(m *arch.Model, w *arch.Roles) ([]float64, error) {
	switch t := m.H.Scaling.Type; t {
	case "", "none", "yarn", "linear":
	default:
		return nil, fmt.Errorf("compiler: %s file has RoPE scaling %q, which orc does not support yet", m.H.Arch, t)
	}
	for _, f := range []*gguf.TensorInfo{w.RopeFactorsShort, w.RopeFactorsLong} {
		if f != nil {
			return nil, fmt.Errorf("compiler: %s file has %s (per-frequency RoPE scaling), which orc does not support yet", m.H.Arch, f.Name)
		}
	}
	t := w.RopeFreqs
	if t == nil {
		return nil, nil
	}
	if !m.Arch.Compute.RopeFreqFactors {
		return nil, fmt.Errorf("compiler: %s file has %s (per-frequency RoPE scaling), which its architecture does not declare", m.H.Arch, t.Name)
	}
	vals := make([]float32, m.H.RopeDims/2) // the weight struct checked the shape
	if err := quant.Dequantize(t.Type, m.File.Data(t), vals); err != nil {
		return nil, fmt.Errorf("compiler: %s: %w", t.Name, err)
	}
	out := make([]float64, len(vals))
	for i, v := range vals {
		if !(v > 0) {
			return nil, fmt.Errorf("compiler: %s[%d] = %g; frequency divisors must be positive", t.Name, i, v)
		}
		out[i] = float64(v)
	}
	return out, nil
}

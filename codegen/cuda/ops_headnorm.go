package cuda

import (
	"fmt"
	"strings"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// headNorm: head_rmsnorm(x, w) or norm_rope(x, w, positions), one warp per
// (token, head) (headnorm.cu.tmpl).
func (e *emitter) headNorm(n *ir.Node) ([]plans.Launch, error) {
	x := n.Inputs[0]
	cols, err := activation(x)
	if err != nil {
		return nil, err
	}
	heads, hd := n.Int("heads"), n.Int("head_dim")
	if heads*hd != cols {
		return nil, fmt.Errorf("heads %d · head_dim %d is not the width %d", heads, hd, cols)
	}
	wa, err := e.vectorAccessor(n.Inputs[1], hd)
	if err != nil {
		return nil, err
	}
	c := &call{}
	c.ptr(e, cIn, "x", x)
	c.ptr(e, cWeight, "w", n.Inputs[1])
	rows, g := rowsOf(x), gridElems(rowsOf(x), heads*32, 128)
	if n.Op == ir.OpHeadRMSNorm {
		c.ptr(e, cOut, "y", n)
		e.stateArg(c)
		return e.emit(c, "head_rmsnorm_rows", 128, g, headNormArgs{N: e.normConfig(n), W: wa, Rows: rows, Heads: heads, HD: hd})
	}
	if !e.prefill && !e.batching && passes.QKNormFolded(n, e.users) {
		return nil, nil // its attention's attend_decode norms and rotates (fold_qk_norm)
	}
	r, err := e.ropeConfig(n, n.Str("mode"))
	if err != nil {
		return nil, err
	}
	c.ptr(e, cInts, "positions", n.Inputs[2])
	c.ptr(e, cOut, "y", n)
	e.stateArg(c)
	return e.emit(c, "norm_rope_rows", 128, g, normRopeArgs{R: r, N: e.normConfig(n), W: wa, Rows: rows, Heads: heads})
}

// geglu(g, u): gelu(g)·u elementwise.
func (e *emitter) geglu(n *ir.Node) ([]plans.Launch, error) {
	g, u := n.Inputs[0], n.Inputs[1]
	f, err := activation(g)
	if err != nil {
		return nil, err
	}
	if uc, err := activation(u); err != nil || uc != f {
		return nil, fmt.Errorf("geglu operands differ: %v and %v", g.Shape, u.Shape)
	}
	c := &call{}
	c.ptr(e, cIn, "g", g)
	c.ptr(e, cIn, "u", u)
	c.ptr(e, cOut, "y", n)
	e.stateArg(c)
	return e.emit(c, "geglu_ew", 256, gridElems(rowsOf(g), f, 256), gegluArgs{Rows: rowsOf(g), F: f})
}

// scale(x){factor}: x·factor elementwise.
func (e *emitter) scale(n *ir.Node) ([]plans.Launch, error) {
	x := n.Inputs[0]
	cols, err := activation(x)
	if err != nil {
		return nil, err
	}
	s := e.kernels.config("Scale", "static constexpr float FACTOR = "+cFloat(n.Float("factor"))+";")
	c := &call{}
	c.ptr(e, cIn, "x", x)
	c.ptr(e, cOut, "y", n)
	e.stateArg(c)
	return e.emit(c, "scale_ew", 256, gridElems(rowsOf(x), cols, 256), scaleArgs{S: s, Rows: rowsOf(x), Cols: cols})
}

// ropeScaled are the members of a rope config whose angles are scaled
// (rope.cu.tmpl's SCALED): by freq_scale (linear scaling) and divided by
// freq_factors (Llama 3's rope_freqs, a __constant__ table); nil when the
// node has neither. YaRN with them is refused: no architecture has both,
// and the two would have to agree on the order.
func (e *emitter) ropeScaled(n *ir.Node) ([]string, error) {
	fs, scaled := n.Attrs["freq_scale"].(float64)
	ff, factors := n.Attrs["freq_factors"].([]float64)
	if !scaled && !factors {
		return nil, nil
	}
	if n.Float("yarn_factor") > 0 {
		return nil, fmt.Errorf("rope with YaRN and freq_scale or freq_factors is not supported")
	}
	expr := "t"
	if scaled {
		expr += " * " + cFloat(fs)
	}
	if factors {
		vals := make([]string, len(ff))
		for i, f := range ff {
			vals[i] = cFloat(f)
		}
		expr += " / " + e.kernels.constTable("RopeFactors", vals) + "[i]"
	}
	return []string{"static constexpr bool SCALED = true;",
		"static __device__ __forceinline__ float scaled(int i, float t) { return " + expr + "; }"}, nil
}

// constTable returns the name of a __constant__ float table of vals,
// emitting it among the configs the first time.
func (s *kernelSet) constTable(prefix string, vals []string) string {
	body := strings.Join(vals, ", ")
	if name, ok := s.configIdx["table "+prefix+body]; ok {
		return name
	}
	name := fmt.Sprintf("%s_%d", prefix, len(s.configs))
	s.configs = append(s.configs, fmt.Sprintf("__constant__ float %s[%d] = {%s};", name, len(vals), body))
	s.configIdx["table "+prefix+body] = name
	return name
}

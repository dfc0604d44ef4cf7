package cpu

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
)

// geglu is gelu(g)·u (Gemma's gated FFN).
func (pr *program) geglu(n *ir.Node) func(*stepState) error {
	g, u, out, c := pr.bufs[n.Inputs[0]], pr.bufs[n.Inputs[1]], pr.bufs[n], cols(n)
	return func(st *stepState) error {
		for i := range out[:rows(n, st.t)*c] {
			out[i] = gelu(g[i]) * u[i]
		}
		return nil
	}
}

// scale multiplies by a constant (Gemma's embedding scale).
func (pr *program) scale(n *ir.Node) func(*stepState) error {
	x, out, c, f := pr.bufs[n.Inputs[0]], pr.bufs[n], cols(n), float32(n.Float("factor"))
	return func(st *stepState) error {
		for i := range out[:rows(n, st.t)*c] {
			out[i] = x[i] * f
		}
		return nil
	}
}

// gateActivation is the function of a swiglu_linear's gate activation.
func gateActivation(a ir.GateAct) (func(float32) float32, error) {
	switch a {
	case ir.GateSiLU:
		return silu, nil
	case ir.GateGELUTanh:
		return gelu, nil
	}
	return nil, fmt.Errorf("swiglu_linear: gate activation %q has no CPU kernel", a)
}

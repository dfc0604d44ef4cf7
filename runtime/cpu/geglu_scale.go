package cpu

import "github.com/llama-orch/orc/ir"

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

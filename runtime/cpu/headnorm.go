package cpu

import "github.com/llama-orch/orc/ir"

// headNormRows RMS-normalises each head (headDim columns) of the first m
// elements of x into out, times w [headDim].
func headNormRows(x, out, w []float32, m, headDim int, eps float64) {
	for h := 0; h < m; h += headDim {
		normRow(x[h:h+headDim], w, nil, out[h:h+headDim], eps)
	}
}

// headRMSNorm is the per-head RMSNorm of q or k (head_rmsnorm).
func (pr *program) headRMSNorm(n *ir.Node) (func(*stepState) error, error) {
	w, err := pr.dense(n.Inputs[1])
	if err != nil {
		return nil, err
	}
	x, out, c, hd, eps := pr.bufs[n.Inputs[0]], pr.bufs[n], cols(n), int(n.Int("head_dim")), n.Float("eps")
	return func(st *stepState) error {
		headNormRows(x, out, w, rows(n, st.t)*c, hd, eps)
		return nil
	}, nil
}

// normRoPE is head_rmsnorm then rope (norm_rope).
func (pr *program) normRoPE(n *ir.Node) (func(*stepState) error, error) {
	w, err := pr.dense(n.Inputs[1])
	if err != nil {
		return nil, err
	}
	r, err := newRoPE(n, "mode", n.Int("heads"))
	if err != nil {
		return nil, err
	}
	x, out, positions := pr.bufs[n.Inputs[0]], pr.bufs[n], n.Inputs[2]
	c, hd, eps := cols(n), int(n.Int("head_dim")), n.Float("eps")
	return func(st *stepState) error {
		m := rows(n, st.t) * c
		headNormRows(x, out, w, m, hd, eps)
		r.apply(out[:m], st.ints(positions)[:st.t])
		return nil
	}, nil
}

package cpu

import (
	"fmt"
	"math"

	"github.com/llama-orch/orc/ir"
)

// kernel returns the closure that computes n, or nil for nodes that need
// no work (weights, inputs, views).
func (pr *program) kernel(n *ir.Node) (func(*stepState) error, error) {
	switch n.Op {
	case ir.OpWeight, ir.OpView:
		return nil, nil
	case ir.OpInput:
		if name := n.Str("name"); name != "tokens" && name != "positions" {
			return nil, fmt.Errorf("unknown graph input %q (want tokens or positions)", name)
		}
		return nil, nil
	case ir.OpEmbed:
		return pr.embed(n)
	case ir.OpAdd:
		return pr.add(n), nil
	case ir.OpRMSNorm, ir.OpLayerNorm:
		return pr.norm(n)
	case ir.OpAddRMSNorm, ir.OpAddLayerNorm, ir.OpAddPostNorm:
		return pr.addNorm(n)
	case ir.OpLinear:
		return pr.linear(n)
	case ir.OpRoPE:
		return pr.rope(n)
	case ir.OpHeadRMSNorm:
		return pr.headRMSNorm(n)
	case ir.OpNormRoPE:
		return pr.normRoPE(n)
	case ir.OpGEGLU:
		return pr.geglu(n), nil
	case ir.OpScale:
		return pr.scale(n), nil
	case ir.OpAttention:
		return pr.attention(n)
	case ir.OpSwiGLU:
		return pr.swiglu(n), nil
	case ir.OpGELU:
		return pr.gelu(n), nil
	case ir.OpLast:
		return pr.last(n), nil
	case ir.OpSplit:
		return pr.split(n), nil
	case ir.OpQKV:
		return pr.qkv(n)
	case ir.OpSwiGLULinear:
		return pr.swigluLinear(n)
	case ir.OpMoE:
		return pr.moe(n)
	}
	return nil, fmt.Errorf("op %s is not supported by the CPU device", n.Op)
}

// ints returns the i32 input node's values for this step.
func (st *stepState) ints(n *ir.Node) []int32 {
	if n.Str("name") == "positions" {
		return st.positions
	}
	return st.tokens
}

// dense returns the decoded values of a weight input (norm weights, biases,
// sinks), decoding it once at load.
func (pr *program) dense(n *ir.Node) ([]float32, error) {
	w, ok := pr.weights[n]
	if !ok {
		return nil, fmt.Errorf("input %%%d (%s) is not a weight", n.ID, n.Op)
	}
	if err := w.makeDense(); err != nil {
		return nil, err
	}
	return w.dense, nil
}

// embed copies rows ids of the table: token embeddings, or gpt2's learned
// positions.
func (pr *program) embed(n *ir.Node) (func(*stepState) error, error) {
	table, ok := pr.weights[n.Inputs[0]]
	if !ok {
		return nil, fmt.Errorf("table %%%d is not a weight", n.Inputs[0].ID)
	}
	ids, out, c := n.Inputs[1], pr.bufs[n], cols(n)
	nRows := int(table.shape[0])
	return func(st *stepState) error {
		for t, id := range st.ints(ids)[:st.t] {
			if id < 0 || int(id) >= nRows {
				return fmt.Errorf("%s id %d is outside table %s of %d rows", ids.Str("name"), id, table.name, nRows)
			}
			if err := table.dequantRow(int(id), out[t*c:(t+1)*c]); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

func (pr *program) add(n *ir.Node) func(*stepState) error {
	a, b, out, c := pr.bufs[n.Inputs[0]], pr.bufs[n.Inputs[1]], pr.bufs[n], cols(n)
	return func(st *stepState) error {
		m := rows(n, st.t) * c
		for i := range out[:m] {
			out[i] = a[i] + b[i]
		}
		return nil
	}
}

// normRow writes the RMSNorm (bias == nil) or LayerNorm of x into out.
// Sums are in float64 so that the reference does not lose bits on wide rows.
func normRow(x, w, bias, out []float32, eps float64) {
	n := float64(len(x))
	mean := 0.0
	if bias != nil {
		for _, v := range x {
			mean += float64(v)
		}
		mean /= n
	}
	ss := 0.0
	for _, v := range x {
		d := float64(v) - mean
		ss += d * d
	}
	inv := 1 / math.Sqrt(ss/n+eps)
	for i, v := range x {
		y := float32((float64(v) - mean) * inv)
		out[i] = y * w[i]
		if bias != nil {
			out[i] += bias[i]
		}
	}
}

// normParams reads a norm's weight (input i) and, for LayerNorm, its bias.
func (pr *program) normParams(n *ir.Node, i int, layer bool) (w, bias []float32, err error) {
	if w, err = pr.dense(n.Inputs[i]); err != nil {
		return nil, nil, err
	}
	if layer {
		if bias, err = pr.dense(n.Inputs[i+1]); err != nil {
			return nil, nil, err
		}
	}
	return w, bias, nil
}

func (pr *program) norm(n *ir.Node) (func(*stepState) error, error) {
	w, bias, err := pr.normParams(n, 1, n.Op == ir.OpLayerNorm)
	if err != nil {
		return nil, err
	}
	x, out, c, eps := pr.bufs[n.Inputs[0]], pr.bufs[n], cols(n), n.Float("eps")
	return func(st *stepState) error {
		for r := range rows(n, st.t) {
			normRow(x[r*c:(r+1)*c], w, bias, out[r*c:(r+1)*c], eps)
		}
		return nil
	}, nil
}

// addNorm writes part 0 = a+b and part 1 = norm(a+b); add_post_rmsnorm's
// b is rmsnorm(b)·wb first, as the unfused rmsnorm and add_rmsnorm compute
// them.
func (pr *program) addNorm(n *ir.Node) (func(*stepState) error, error) {
	wAt := 2
	var wb []float32
	if n.Op == ir.OpAddPostNorm {
		var err error
		if wb, err = pr.dense(n.Inputs[2]); err != nil {
			return nil, err
		}
		wAt = 3
	}
	w, bias, err := pr.normParams(n, wAt, n.Op == ir.OpAddLayerNorm)
	if err != nil {
		return nil, err
	}
	a, b, out := pr.bufs[n.Inputs[0]], pr.bufs[n.Inputs[1]], pr.bufs[n]
	c, eps := cols(n.Inputs[0]), n.Float("eps")
	sum, normed := out[:pr.partOffset(n, 1)], out[pr.partOffset(n, 1):]
	return func(st *stepState) error {
		for r := range rows(n, st.t) {
			s, br := sum[r*c:(r+1)*c], b[r*c:(r+1)*c]
			if wb != nil {
				normRow(br, wb, nil, s, eps)
				br = s
			}
			for i := range s {
				s[i] = br[i] + a[r*c+i]
			}
			normRow(s, w, bias, normed[r*c:(r+1)*c], eps)
		}
		return nil
	}, nil
}

func silu(x float32) float32 { return x / (1 + float32(math.Exp(float64(-x)))) }

// swiglu is silu(g)·u, from two inputs or from one [T, 2F] input whose first
// F columns are g.
func (pr *program) swiglu(n *ir.Node) func(*stepState) error {
	f, out := cols(n), pr.bufs[n]
	g, u, stride, uOff := pr.bufs[n.Inputs[0]], pr.bufs[n.Inputs[0]], 2*f, f
	if len(n.Inputs) == 2 {
		u, stride, uOff = pr.bufs[n.Inputs[1]], f, 0
	}
	return func(st *stepState) error {
		for r := range rows(n, st.t) {
			for j := range f {
				out[r*f+j] = silu(g[r*stride+j]) * u[r*stride+uOff+j]
			}
		}
		return nil
	}
}

// gelu is GELU's tanh approximation, as GPT-2 uses it.
func gelu(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v))))
}

func (pr *program) gelu(n *ir.Node) func(*stepState) error {
	x, out, c := pr.bufs[n.Inputs[0]], pr.bufs[n], cols(n)
	return func(st *stepState) error {
		for i := range out[:rows(n, st.t)*c] {
			out[i] = gelu(x[i])
		}
		return nil
	}
}

// last copies the step's last row.
func (pr *program) last(n *ir.Node) func(*stepState) error {
	in := n.Inputs[0]
	x, out, c := pr.bufs[in], pr.bufs[n], cols(n)
	return func(st *stepState) error {
		r := rows(in, st.t) - 1
		copy(out[:c], x[r*c:(r+1)*c])
		return nil
	}
}

// split copies the column ranges of x into the packed parts.
func (pr *program) split(n *ir.Node) func(*stepState) error {
	x, out, width := pr.bufs[n.Inputs[0]], pr.bufs[n], cols(n.Inputs[0])
	parts := n.Ints("parts")
	return func(st *stepState) error {
		col := 0
		for i, c64 := range parts {
			c, dst := int(c64), out[pr.partOffset(n, i):]
			for r := range rows(n, st.t) {
				copy(dst[r*c:(r+1)*c], x[r*width+col:r*width+col+c])
			}
			col += c
		}
		return nil
	}
}

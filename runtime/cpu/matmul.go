package cpu

import (
	"fmt"
	"sync"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/quant"
)

// matmul computes y[r, o] = x[r, :]·w[first+o, :] (+ bias[o]) for r < nRows,
// o < out; x is [nRows, w.cols], y is [nRows, out]. Output rows are shared
// among goroutines. One token uses quant.Dot on the encoded row; several
// decode each weight row once and reuse it for every token.
func matmul(threads int, x []float32, nRows int, w *weight, first, out int, bias, y []float32) error {
	return gemm(threads, x, nRows, w, first, out, bias, y, nRows > 1)
}

// project is matmul as the program's linear ops run it in step st. A
// batched step, and a batch's solo sequence, decode every weight row even
// for a step of one row (stepState.decodeRows), so that a row's arithmetic
// never depends on how many rows share its step or which of the two runs
// it.
func (pr *program) project(st *stepState, x []float32, nRows int, w *weight, first, out int, bias, y []float32) error {
	return gemm(pr.threads, x, nRows, w, first, out, bias, y, st.decodeRows || nRows > 1)
}

// gemm is matmul, decoding each weight row to float32 once for all rows
// when decode is set, else (one row) dotting the encoded row directly.
func gemm(threads int, x []float32, nRows int, w *weight, first, out int, bias, y []float32, decode bool) error {
	in := w.cols
	var (
		mu   sync.Mutex
		fail error
	)
	parallelFor(threads, out, in*nRows, func(lo, hi int) {
		var row []float32
		if decode {
			row = make([]float32, in)
		}
		for o := lo; o < hi; o++ {
			b := float32(0)
			if bias != nil {
				b = bias[o]
			}
			if !decode {
				y[o] = quant.Dot(w.typ, w.row(first+o), x[:in]) + b
				continue
			}
			if err := w.dequantRow(first+o, row); err != nil {
				mu.Lock()
				fail = err
				mu.Unlock()
				return
			}
			for r := range nRows {
				y[r*out+o] = dot(row, x[r*in:(r+1)*in]) + b
			}
		}
	})
	if fail != nil {
		return fmt.Errorf("weight %s: %w", w.name, fail)
	}
	return nil
}

// dot is a float32 dot product with four accumulators.
func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	n := len(a) &^ 3
	b = b[:len(a)]
	for i := 0; i < n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for i := n; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// matrixInput returns the weight behind input i of n.
func (pr *program) matrixInput(n *ir.Node, i int) (*weight, error) {
	w, ok := pr.weights[n.Inputs[i]]
	if !ok {
		return nil, fmt.Errorf("input %d (%%%d %s) must be a weight", i, n.Inputs[i].ID, n.Inputs[i].Op)
	}
	return w, nil
}

func (pr *program) linear(n *ir.Node) (func(*stepState) error, error) {
	w, err := pr.matrixInput(n, 1)
	if err != nil {
		return nil, err
	}
	var bias []float32
	if len(n.Inputs) == 3 {
		if bias, err = pr.dense(n.Inputs[2]); err != nil {
			return nil, err
		}
	}
	x, y, out := pr.bufs[n.Inputs[0]], pr.bufs[n], cols(n)
	return func(st *stepState) error {
		return pr.project(st, x, rows(n, st.t), w, 0, out, bias, y)
	}, nil
}

// qkv runs the three projections into the packed parts, then, when RoPE is
// folded in (attr rope_mode), rotates q and k at the step's positions.
func (pr *program) qkv(n *ir.Node) (func(*stepState) error, error) {
	var ws [3]*weight
	var biases [3][]float32
	_, roped := n.Attrs["rope_mode"]
	nBias := len(n.Inputs) - 4
	if roped {
		nBias--
	}
	for i := range ws {
		var err error
		if ws[i], err = pr.matrixInput(n, 1+i); err != nil {
			return nil, err
		}
		if nBias == 3 {
			if biases[i], err = pr.dense(n.Inputs[4+i]); err != nil {
				return nil, err
			}
		}
	}
	var qRope, kRope *rope
	var positions *ir.Node
	if roped {
		var err error
		if qRope, err = newRoPE(n, "rope_mode", n.Int("heads")); err != nil {
			return nil, err
		}
		if kRope, err = newRoPE(n, "rope_mode", n.Int("kv_heads")); err != nil {
			return nil, err
		}
		positions = n.Inputs[len(n.Inputs)-1]
	}
	x, out, parts := pr.bufs[n.Inputs[0]], pr.bufs[n], n.Ints("parts")
	return func(st *stepState) error {
		nRows := rows(n, st.t)
		for i, w := range ws {
			part := out[pr.partOffset(n, i):]
			if err := pr.project(st, x, nRows, w, 0, int(parts[i]), biases[i], part); err != nil {
				return err
			}
		}
		if roped {
			pos := st.ints(positions)
			qRope.apply(out[:nRows*int(parts[0])], pos[:nRows])
			kRope.apply(out[pr.partOffset(n, 1):][:nRows*int(parts[1])], pos[:nRows])
		}
		return nil
	}, nil
}

// swigluLinear is act(x·wgᵀ)·(x·wuᵀ), act its gate activation (SiLU or
// tanh-GELU); the one-weight form takes phi3's packed [2F, in] whose first F
// rows are the gate.
func (pr *program) swigluLinear(n *ir.Node) (func(*stepState) error, error) {
	wg, err := pr.matrixInput(n, 1)
	if err != nil {
		return nil, err
	}
	wu, upFirst := wg, cols(n)
	if len(n.Inputs) == 3 {
		if wu, err = pr.matrixInput(n, 2); err != nil {
			return nil, err
		}
		upFirst = 0
	}
	x, out, f := pr.bufs[n.Inputs[0]], pr.bufs[n], cols(n)
	act, err := gateActivation(n.GateAct())
	if err != nil {
		return nil, err
	}
	var gate, up []float32 // scratch [max_tokens, F]
	return func(st *stepState) error {
		nRows := rows(n, st.t)
		if gate == nil {
			gate, up = make([]float32, pr.maxTokens*f), make([]float32, pr.maxTokens*f)
		}
		if err := pr.project(st, x, nRows, wg, 0, f, nil, gate); err != nil {
			return err
		}
		if err := pr.project(st, x, nRows, wu, upFirst, f, nil, up); err != nil {
			return err
		}
		for i := range out[:nRows*f] {
			out[i] = act(gate[i]) * up[i]
		}
		return nil
	}, nil
}

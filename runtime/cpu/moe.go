package cpu

import (
	"math"

	"github.com/llama-orch/orc/ir"
)

// moe is gpt-oss's mixture of experts (transformers' GptOssMLP): router
// logits x·Wrᵀ+br, the top_k largest (lower expert index first on ties),
// softmax over those k; per chosen expert g = min(x·Wgᵀ+bg, limit),
// u = clamp(x·Wuᵀ+bu, ±limit), h = (u+1)·g·σ(alpha·g), y = h·Wdᵀ+bd; the
// output is the softmax-weighted sum of the experts' y.
func (pr *program) moe(n *ir.Node) (func(*stepState) error, error) {
	router, err := pr.matrixInput(n, 1)
	if err != nil {
		return nil, err
	}
	var mats [3]*weight     // gate [E, F, D], up [E, F, D], down [E, D, F]
	var biases [4][]float32 // router [E], gate [E, F], up [E, F], down [E, D]
	if biases[0], err = pr.dense(n.Inputs[2]); err != nil {
		return nil, err
	}
	for i := range mats {
		if mats[i], err = pr.matrixInput(n, 3+2*i); err != nil {
			return nil, err
		}
		if biases[1+i], err = pr.dense(n.Inputs[4+2*i]); err != nil {
			return nil, err
		}
	}
	gate, up, down := mats[0], mats[1], mats[2]
	experts, k := int(n.Int("experts")), int(n.Int("top_k"))
	limit, alpha := float32(n.Float("limit")), n.Float("alpha")
	d, f := cols(n), int(gate.shape[1])
	x, out := pr.bufs[n.Inputs[0]], pr.bufs[n]
	logits, chosen, weights := make([]float32, experts), make([]int, k), make([]float64, k)
	g, u, y := make([]float32, f), make([]float32, f), make([]float32, d)
	return func(st *stepState) error {
		for t := range rows(n, st.t) {
			xt, ot := x[t*d:(t+1)*d], out[t*d:(t+1)*d]
			if err := matmul(pr.threads, xt, 1, router, 0, experts, biases[0], logits); err != nil {
				return err
			}
			topExperts(logits, chosen)
			top := float64(logits[chosen[0]])
			sum := 0.0
			for i, e := range chosen {
				weights[i] = math.Exp(float64(logits[e]) - top)
				sum += weights[i]
			}
			clear(ot)
			for i, e := range chosen {
				if err := matmul(pr.threads, xt, 1, gate, e*f, f, biases[1][e*f:], g); err != nil {
					return err
				}
				if err := matmul(pr.threads, xt, 1, up, e*f, f, biases[2][e*f:], u); err != nil {
					return err
				}
				for j := range g {
					gj := min(g[j], limit)
					uj := min(max(u[j], -limit), limit)
					g[j] = (uj + 1) * gj * float32(1/(1+math.Exp(-alpha*float64(gj))))
				}
				if err := matmul(pr.threads, g, 1, down, e*d, d, biases[3][e*d:], y); err != nil {
					return err
				}
				w := float32(weights[i] / sum)
				for j := range ot {
					ot[j] += w * y[j]
				}
			}
		}
		return nil
	}, nil
}

// topExperts fills chosen with the indices of the len(chosen) largest
// logits, largest first, the lower index first on ties (torch.topk's order
// on distinct values).
func topExperts(logits []float32, chosen []int) {
	for i := range chosen {
		best := -1
		for e, l := range logits {
			taken := false
			for _, c := range chosen[:i] {
				taken = taken || c == e
			}
			if !taken && (best < 0 || l > logits[best]) {
				best = e
			}
		}
		chosen[i] = best
	}
}

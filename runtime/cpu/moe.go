package cpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/llama-orch/orc/ir"
)

// moe is the mixture of experts of gpt-oss (transformers' GptOssMLP) and
// Qwen3-MoE: router logits x·Wrᵀ+br, the top_k largest (lower expert index
// first on ties), softmax over those k (for Qwen3-MoE the same as its
// renormalised top-k of the softmax); per chosen expert, clamped (gpt-oss)
// g = min(x·Wgᵀ+bg, limit), u = clamp(x·Wuᵀ+bu, ±limit),
// h = (u+1)·g·σ(alpha·g), else h = silu(g)·u; y = h·Wdᵀ+bd; the output is
// the softmax-weighted sum of the experts' y. Absent biases add nothing.
// With the device's Route option, each token's picks go through it first.
func (pr *program) moe(n *ir.Node) (func(*stepState) error, error) {
	index := pr.moes // bindProgram binds the nodes in order
	pr.moes++
	w := ir.MoEInputs(n)
	var mats [4]*weight         // router [E, D], gate [E, F, D], up [E, F, D], down [E, D, F]
	var biases [4][]float32     // router [E], gate [E, F], up [E, F], down [E, D]; nil when absent
	matIdx := []int{1, 3, 5, 7} // where the matrices are among the inputs
	if len(n.Inputs) == 5 {
		matIdx = []int{1, 2, 3, 4}
	}
	for i, at := range matIdx {
		var err error
		if mats[i], err = pr.matrixInput(n, at); err != nil {
			return nil, err
		}
	}
	for i, in := range []*ir.Node{w.RouterBias, w.GateBias, w.UpBias, w.DownBias} {
		var err error
		if in != nil {
			if biases[i], err = pr.dense(in); err != nil {
				return nil, err
			}
		}
	}
	router, gate, up, down := mats[0], mats[1], mats[2], mats[3]
	experts, k := int(n.Int("experts")), int(n.Int("top_k"))
	clamped, limit, alpha := n.Clamped(), float32(n.Float("limit")), n.Float("alpha")
	at := func(b []float32, off int) []float32 {
		if b == nil {
			return nil
		}
		return b[off:]
	}
	d, f := cols(n), int(gate.shape[1])
	x, out := pr.bufs[n.Inputs[0]], pr.bufs[n]
	logits, chosen, weights := make([]float32, experts), make([]int, k), make([]float64, k)
	g, u, y := make([]float32, f), make([]float32, f), make([]float32, d)
	r := &Routing{MoE: index, Logits: logits, Experts: chosen}
	return func(st *stepState) error {
		for t := range rows(n, st.t) {
			xt, ot := x[t*d:(t+1)*d], out[t*d:(t+1)*d]
			if err := matmul(pr.threads, xt, 1, router, 0, experts, biases[0], logits); err != nil {
				return err
			}
			topExperts(logits, chosen)
			if pr.route != nil {
				r.Row, r.Pos = 0, int(st.positions[t])
				if st.rowSeq != nil {
					r.Row = int(st.rowSeq[t])
				}
				pr.route(r)
				if err := checkPicks(chosen, experts); err != nil {
					return err
				}
			}
			top := math.Inf(-1)
			for _, e := range chosen {
				top = max(top, float64(logits[e]))
			}
			sum := 0.0
			for i, e := range chosen {
				weights[i] = math.Exp(float64(logits[e]) - top)
				sum += weights[i]
			}
			clear(ot)
			for i, e := range chosen {
				if err := matmul(pr.threads, xt, 1, gate, e*f, f, at(biases[1], e*f), g); err != nil {
					return err
				}
				if err := matmul(pr.threads, xt, 1, up, e*f, f, at(biases[2], e*f), u); err != nil {
					return err
				}
				for j := range g {
					if !clamped {
						g[j] = silu(g[j]) * u[j]
						continue
					}
					gj := min(g[j], limit)
					uj := min(max(u[j], -limit), limit)
					g[j] = (uj + 1) * gj * float32(1/(1+math.Exp(-alpha*float64(gj))))
				}
				if err := matmul(pr.threads, g, 1, down, e*d, d, at(biases[3], e*d), y); err != nil {
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

// Routing is one token's routing by one mixture of experts, as the
// device's Route option sees it.
type Routing struct {
	MoE    int       // the mixture's index among the graph's, in order
	Row    int       // the token's row in its batched step (0 in a sequence's step)
	Pos    int       // the token's position in its sequence
	Logits []float32 // the router's logits, one an expert; read only
	// Experts are the picks, the largest logit first; Route may replace
	// them by other distinct experts, whose logits then weight them.
	Experts []int
}

// Margin is how far the last pick's logit lies above the largest logit
// not picked, relative to the largest |logit|: where another device's
// router logits differ from these by more, it may pick otherwise.
func (r *Routing) Margin() float64 {
	last, scale := float64(r.Logits[r.Experts[len(r.Experts)-1]]), 0.0
	for _, l := range r.Logits {
		scale = max(scale, math.Abs(float64(l)))
	}
	if e := r.bestUnpicked(); e >= 0 && scale > 0 {
		return (last - float64(r.Logits[e])) / scale
	}
	return math.Inf(1)
}

// Turn replaces the last pick by the expert of the largest logit not
// picked: the routing on the other side of Margin.
func (r *Routing) Turn() {
	if e := r.bestUnpicked(); e >= 0 {
		r.Experts[len(r.Experts)-1] = e
	}
}

// bestUnpicked is the expert of the largest logit not among the picks
// (the lower index on ties), or -1 where every expert is picked.
func (r *Routing) bestUnpicked() int {
	best := -1
	for e, l := range r.Logits {
		if !slices.Contains(r.Experts, e) && (best < 0 || l > r.Logits[best]) {
			best = e
		}
	}
	return best
}

// checkPicks refuses picks that are not distinct experts of [0, experts).
func checkPicks(picks []int, experts int) error {
	for i, e := range picks {
		if e < 0 || e >= experts || slices.Contains(picks[:i], e) {
			return fmt.Errorf("the Route option picked experts %v; want %d distinct of [0, %d)", picks, len(picks), experts)
		}
	}
	return nil
}

package ir

// GateAct is the activation of a gated feed-forward's gate: what
// swiglu_linear computes of x·wgᵀ before it multiplies by x·wuᵀ.
type GateAct string

const (
	// GateSiLU is x·σ(x) (swiglu; swiglu_linear without attribute act).
	GateSiLU GateAct = "silu"
	// GateGELUTanh is GELU's tanh approximation, 0.5·x·(1 + tanh(√(2/π)·(x
	// + 0.044715·x³))) (geglu; transformers' gelu_pytorch_tanh), recorded as
	// act on the swiglu_linear fused of a geglu.
	GateGELUTanh GateAct = "gelu_tanh"
)

// GateAct is swiglu_linear n's gate activation.
func (n *Node) GateAct() GateAct {
	if a := n.Str("act"); a != "" {
		return GateAct(a)
	}
	return GateSiLU
}

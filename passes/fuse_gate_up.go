package passes

import "github.com/llama-orch/orc/ir"

// fuseGateUp turns a gated feed-forward's input side into one kernel:
// swiglu(linear(x, wg), linear(x, wu)) → swiglu_linear(x, wg, wu), and
// phi3's swiglu(linear(x, wgu)) with the packed gate·up weight →
// swiglu_linear(x, wgu). The kernel computes both dot products of a column
// together and writes only act(g)·u, so the [T, 2F] intermediate never
// reaches memory. A geglu (Gemma's tanh-GELU gate) fuses the same way, its
// activation recorded as act="gelu_tanh" on the swiglu_linear. Projections
// with a bias, or read by anything else, stay.
func fuseGateUp(g *ir.Graph) error {
	use := users(g)
	dead := map[*ir.Node]bool{}
	for _, s := range g.Nodes {
		act, gated := gateActs[s.Op]
		if !gated {
			continue
		}
		var lin []*ir.Node
		for _, in := range s.Inputs {
			if in.Op != ir.OpLinear || len(in.Inputs) != 2 || len(use[in]) != 1 {
				lin = nil
				break
			}
			lin = append(lin, in)
		}
		if lin == nil || len(lin) == 2 && (lin[0] == lin[1] || lin[0].Inputs[0] != lin[1].Inputs[0]) {
			continue
		}
		inputs := []*ir.Node{lin[0].Inputs[0]}
		for _, l := range lin {
			inputs = append(inputs, l.Inputs[1])
			dead[l] = true
		}
		var attrs map[string]any
		if act != ir.GateSiLU {
			attrs = map[string]any{"act": string(act)}
		}
		fused := g.Add(ir.OpSwiGLULinear, ir.F32, s.Shape, attrs, inputs...)
		replaceUses(g, s, fused)
		dead[s] = true
	}
	if len(dead) > 0 {
		removeNodes(g, dead)
		restoreOrder(g)
	}
	return nil
}

// gateActs are the gated activations fuseGateUp fuses, and the gate
// activation each gives its swiglu_linear.
var gateActs = map[ir.Op]ir.GateAct{ir.OpSwiGLU: ir.GateSiLU, ir.OpGEGLU: ir.GateGELUTanh}

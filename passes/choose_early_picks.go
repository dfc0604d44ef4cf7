package passes

import "github.com/llama-orch/orc/ir"

// chooseEarlyPicks decides, where the target launches dependent grids
// early (DependentLaunch), that each decode q8 MoE's down kernel
// (moe_down_sum_q8, moe.cu.tmpl) picks its experts from the router logits
// before its grid_dep_wait and fetches their weight groups while gate+up
// finishes, and records it (pick_early). The logits are complete when the
// down starts: their writer (moe_logits, or the router norm's
// rmsnorm_logits) is followed by moe_gate_up_q8, which waits for it in its
// wrapper before the down launches; codegen/cuda proves that on the
// decode schedule and refuses a record it cannot.
func chooseEarlyPicks(g *ir.Graph) error {
	gpu, err := graphGPU(g)
	if err != nil {
		return err
	}
	for _, n := range g.Nodes {
		delete(n.Attrs, "pick_early")
		if gpu.DependentLaunch && n.Op == ir.OpMoE && n.Str("kernel") == ir.KernelQ8 {
			n.Attrs["pick_early"] = true
		}
	}
	return nil
}

package passes

import "github.com/llama-orch/orc/ir"

// chooseLateStarts decides, where the target launches dependent grids
// early (DependentLaunch), which decode kernels should launch only when
// the grid before them completes, and records it (starts_late), and which
// launch lets each launch at its end, not its start: the last launch of
// the node that launches before it (launch_at_end), or where the late
// kernel quantizes its input first, that quantize_x8 (quantize_at_end).
// Launched as the grid before them starts, these kernels' blocks take that
// grid's SM slots and DRAM with their early stage copies (the tensor-core
// qkv and SwiGLU, kernel mma) or sit in the slots waiting (a q8 linear
// that stages its input, stages_x). H100, Phi-3-mini's decode step with
// its norms folded, ms, medians of one call each: the folded norms'
// readers launched as their producers start 1.5078, at their end 1.4915;
// then the staged downs at the SwiGLU's end too, 1.4928 → 1.4678. The
// attention and the o-proj, which fetch before their wait, lost 4.4 % and
// 3 % that way.
func chooseLateStarts(g *ir.Graph) error {
	gpu, err := graphGPU(g)
	if err != nil {
		return err
	}
	for _, n := range g.Nodes {
		for _, k := range []string{"starts_late", "launch_at_end", "quantize_at_end"} {
			delete(n.Attrs, k)
		}
		if gpu.DependentLaunch && (isMatrix(n) && n.Str("kernel") == ir.KernelMMA || n.Bool("stages_x")) {
			n.Attrs["starts_late"] = true
		}
	}
	if !gpu.DependentLaunch {
		return nil
	}
	d := newDecodeLaunches(g, gpu)
	var last *ir.Node // the last node that launched
	for _, n := range g.Nodes {
		if n.Bool("starts_late") {
			switch {
			case d.quantizes[n]:
				n.Attrs["quantize_at_end"] = true
			case last != nil:
				last.Attrs["launch_at_end"] = true
			}
		}
		if !d.none(n) {
			last = n
		}
	}
	return nil
}

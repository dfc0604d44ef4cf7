package passes

import "github.com/llama-orch/orc/ir"

// chooseEarlyResiduals decides, where the target launches dependent grids
// early (DependentLaunch), which decode q8 linears that add the residual
// into their rows (writes_sum) read it before their grid_dep_wait
// (linear_q8's RES, q8_rows.cu.tmpl), and records it
// (residual_before_wait): where the residual's writer has completed when
// the linear's grid starts. Every grid waits for the one before it and
// completes after its wait, so the writer has completed where it or a
// launch after it lets the next grid launch only at its end
// (launch_at_end, quantize_at_end, chooseLateStarts), or a launch after it
// waits in its wrapper (decodeLaunches). Read before the wait, the
// residual is off the chain after it, the dots and their block sums, where
// it was one more round trip to L2: Phi-3-mini's o-projs read the previous
// layer's down's sum, its downs the o-proj's.
func chooseEarlyResiduals(g *ir.Graph) error {
	gpu, err := graphGPU(g)
	if err != nil {
		return err
	}
	for _, n := range g.Nodes {
		delete(n.Attrs, "residual_before_wait")
	}
	if !gpu.DependentLaunch {
		return nil
	}
	d := newDecodeLaunches(g, gpu)
	at := map[*ir.Node]int{}
	for i, n := range g.Nodes {
		at[n] = i
		if n.Op != ir.OpLinear || n.Str("kernel") != ir.KernelQ8 || !n.Bool("writes_sum") {
			continue
		}
		_, r := ResidualWriter(d.users[n][0], d.users)
		w := d.writerOf(r)
		if w != nil && d.completeBefore(w, g.Nodes[at[w]+1:i], n) {
			n.Attrs["residual_before_wait"] = true
		}
	}
	return nil
}

// writerOf is the node whose last decode launch writes value v: v's own
// (through views), or the linear that writes an add_rmsnorm's sum
// (ResidualWriter); nil where none launches.
func (d decodeLaunches) writerOf(v *ir.Node) *ir.Node {
	for v.Op == ir.OpView {
		v = v.Inputs[0]
	}
	if l, _ := ResidualWriter(v, d.users); l != nil {
		return l
	}
	if d.none(v) {
		return nil
	}
	return v
}

// completeBefore reports whether writer w's last decode launch has
// completed when reader r's kernel starts, the nodes between them
// launching between.
func (d decodeLaunches) completeBefore(w *ir.Node, between []*ir.Node, r *ir.Node) bool {
	if w.Bool("launch_at_end") || d.quantizes[r] { // r's quantize_x8 waits in its wrapper
		return true
	}
	for _, m := range between {
		if d.waitsInWrapper(m) || m.Bool("launch_at_end") {
			return true
		}
	}
	return false
}

package passes

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// TestDependentLaunchChoicesOff: on a target without dependent launch
// (sm_80) every grid starts after the one before it completes, so no MoE
// records pick_early, no kernel starts_late or launches at its end, and no
// linear reads its residual before its wait; running a pass again drops
// its old records.
func TestDependentLaunchChoicesOff(t *testing.T) {
	for _, c := range []struct {
		pass  string
		attrs []string
		fn    func(*ir.Graph) error
	}{
		{"chooseEarlyPicks", []string{"pick_early"}, chooseEarlyPicks},
		{"chooseLateStarts", []string{"starts_late", "launch_at_end", "quantize_at_end"}, chooseLateStarts},
		{"chooseEarlyResiduals", []string{"residual_before_wait"}, chooseEarlyResiduals},
	} {
		g := parseFile(t, "testdata/"+c.pass+".after.ir")
		g.Attrs["target"] = "sm_80"
		if err := c.fn(g); err != nil {
			t.Fatal(err)
		}
		for _, n := range g.Nodes {
			for _, a := range c.attrs {
				if n.Bool(a) {
					t.Errorf("%s: %%%d %s records %s on sm_80", c.pass, n.ID, n.Op, a)
				}
			}
		}
	}
}

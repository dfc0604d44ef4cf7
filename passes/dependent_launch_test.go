package passes

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// TestDependentLaunchChoicesOff: on a target without dependent launch
// (sm_80) every grid starts after the one before it completes, so no MoE
// records pick_early and no kernel starts_late; running a pass again drops
// its old records.
func TestDependentLaunchChoicesOff(t *testing.T) {
	for _, c := range []struct {
		pass, attr string
		fn         func(*ir.Graph) error
	}{
		{"chooseEarlyPicks", "pick_early", chooseEarlyPicks},
		{"chooseLateStarts", "starts_late", chooseLateStarts},
	} {
		g := parseFile(t, "testdata/"+c.pass+".after.ir")
		g.Attrs["target"] = "sm_80"
		if err := c.fn(g); err != nil {
			t.Fatal(err)
		}
		for _, n := range g.Nodes {
			if n.Bool(c.attr) {
				t.Errorf("%s: %%%d %s records %s on sm_80", c.pass, n.ID, n.Op, c.attr)
			}
		}
	}
}

package passes

import "testing"

// TestEarlyPicksNeedDependentLaunch: on a target without dependent launch
// (sm_80) every grid starts after the one before it completes, so no MoE
// records pick_early, and running the pass again drops old records.
func TestEarlyPicksNeedDependentLaunch(t *testing.T) {
	g := parseFile(t, "testdata/chooseEarlyPicks.after.ir")
	g.Attrs["target"] = "sm_80"
	if err := chooseEarlyPicks(g); err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if n.Bool("pick_early") {
			t.Errorf("%%%d %s picks early on sm_80", n.ID, n.Op)
		}
	}
}

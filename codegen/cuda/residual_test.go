package cuda

import (
	"testing"

	"github.com/llama-orch/orc/plans"
)

// TestResidualsBeforeWait: a linear_q8 reads its residual before its wait
// only where a launch without grid_dep_launch lies between the residual's
// writer (included) and the reader, so the writer has completed when the
// reader launches.
func TestResidualsBeforeWait(t *testing.T) {
	res := plans.Arg{Kind: plans.ArgArena, Offset: 4096}
	other := plans.Arg{Kind: plans.ArgArena, Offset: 8192}
	cases := []struct {
		name   string
		atEnd  [2]bool // the writer's and the launch between's LaunchesAtEnd
		writes [2]bool // which of them writes the residual (the later one counts)
		want   string
	}{
		{"writer at its end", [2]bool{true, false}, [2]bool{true, false}, resBeforeWait},
		{"a launch at its end after the writer", [2]bool{false, true}, [2]bool{true, false}, resBeforeWait},
		{"no launch at its end", [2]bool{false, false}, [2]bool{true, false}, resAfterWait},
		{"at its end before the last writer", [2]bool{true, false}, [2]bool{true, true}, resAfterWait},
		{"no writer in the schedule", [2]bool{true, true}, [2]bool{false, false}, resAfterWait},
	}
	for _, c := range cases {
		s := newKernelSet()
		var ls []plans.Launch
		for i := range 2 {
			k := &instance{Fn: "add", TArgs: []string{string(rune('a' + i))}, LaunchesAtEnd: c.atEnd[i],
				Params: []param{{cIn, "a"}, {cOut, "y"}}}
			y := other
			if c.writes[i] {
				y = res
			}
			ls = append(ls, plans.Launch{Kernel: s.add(k), Args: []plans.Arg{res, y}})
		}
		reader := &instance{Fn: "linear_q8", TArgs: []string{"W", "B", "64", "64", "32", "false", "false", resAfterWait, "true", "0", "1"},
			Params: []param{{cWeight, "w"}, {cOut, "y"}, {cIn, "r"}}}
		ls = append(ls, plans.Launch{Kernel: s.add(reader), Args: []plans.Arg{{Kind: plans.ArgWeight}, other, res}})
		s.residualsBeforeWait(ls)
		if got := s.byName[ls[2].Kernel].TArgs[linearResArg]; got != c.want {
			t.Errorf("%s: RES %s, want %s (%s)", c.name, got, c.want, ls[2].Kernel)
		}
	}
}

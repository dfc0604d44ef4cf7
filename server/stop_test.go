package server

import (
	"strings"
	"testing"
)

func TestStopMatcherAcrossTokens(t *testing.T) {
	cases := []struct {
		stops  []string
		pieces []string
		want   string
		stop   bool
	}{
		{[]string{"END"}, []string{"hello E", "N", "D tail"}, "hello ", true},
		{[]string{"END"}, []string{"hello E", "N", "d tail"}, "hello ENd tail", false},
		{[]string{"\n\n", "###"}, []string{"a\n", "b#", "#", "#c"}, "a\nb", true},
		{nil, []string{"x", "y"}, "xy", false},
		{[]string{"ab"}, []string{"aaab"}, "aa", true},
	}
	for _, c := range cases {
		m := stopMatcher{stops: c.stops}
		var out strings.Builder
		stopped := false
		for _, p := range c.pieces {
			e, s := m.push(p)
			out.WriteString(e)
			if s {
				stopped = true
				break
			}
		}
		if !stopped {
			out.WriteString(m.flush())
		}
		if out.String() != c.want || stopped != c.stop {
			t.Errorf("%q over %q: got %q stopped=%v, want %q stopped=%v", c.stops, c.pieces, out.String(), stopped, c.want, c.stop)
		}
	}
}

func TestStopMatcherNeverEmitsAPrefixLate(t *testing.T) {
	m := stopMatcher{stops: []string{"STOP"}}
	e1, _ := m.push("xS")
	e2, _ := m.push("T")
	if e1 != "x" || e2 != "" {
		t.Fatalf("emitted %q, %q before the stop string could be ruled out", e1, e2)
	}
	e3, s := m.push("ar")
	if s || e3 != "STar" {
		t.Fatalf("got %q stopped=%v", e3, s)
	}
}

package cuda

import (
	"strings"
	"testing"
)

// TestKernelSetConflict checks that kernelSet.add keeps one instance a
// name and records a conflict where a second launch under that name would
// take the first's threads, launch bounds, cluster, parameters or call.
func TestKernelSetConflict(t *testing.T) {
	base := func() *instance {
		return &instance{Fn: "linear_gemv", TArgs: quantizeArgs{Rows: 1, In: 256}, Threads: 256, MinBlocks: 2, Cluster: 1,
			Params: []param{{"const float*", "x"}}, Args: []string{"x"}}
	}
	for _, c := range []struct {
		name string
		edit func(*instance)
		bad  bool
	}{
		{"same", func(*instance) {}, false},
		{"no cluster as cluster 1", func(k *instance) { k.Cluster = 0 }, false},
		{"threads", func(k *instance) { k.Threads = 128 }, true},
		{"launch bounds", func(k *instance) { k.MinBlocks = 3 }, true},
		{"cluster", func(k *instance) { k.Cluster = 2 }, true},
		{"starts late", func(k *instance) { k.StartsLate = true }, true},
		{"params", func(k *instance) { k.Params = []param{{"const float*", "y"}} }, true},
		{"call", func(k *instance) { k.Args = []string{"nullptr"} }, true},
	} {
		s := newKernelSet()
		first := s.add(base())
		k := base()
		c.edit(k)
		if name := s.add(k); name != first || len(s.instances) != 1 {
			t.Errorf("%s: %q and %q, %d instances: want one name and one instance", c.name, first, name, len(s.instances))
		}
		if got := s.conflict != nil; got != c.bad {
			t.Errorf("%s: conflict %v, want %v", c.name, s.conflict, c.bad)
		} else if got && !strings.Contains(s.conflict.Error(), first) {
			t.Errorf("%s: the conflict does not name the kernel: %v", c.name, s.conflict)
		}
	}
	s := newKernelSet()
	s.add(base())
	k := base()
	k.TArgs = quantizeArgs{Rows: 1, In: 512}
	if s.add(k); s.conflict != nil || len(s.instances) != 2 {
		t.Errorf("other template arguments: conflict %v, %d instances; want none, 2", s.conflict, len(s.instances))
	}
}

package cuda

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// step is a launch of a schedule under test: whether its kernel waits in
// its wrapper (else inside, as qkv_mma), lets the next grid launch only at
// its end, and writes the value the reader reads.
type step struct{ wrapperWaits, atEnd, writes bool }

// schedule builds launches of steps, then a reader launch of fn reading the
// value through parameter read with template arguments targs.
func schedule(steps []step, fn, read string, targs any) (*kernelSet, []plans.Launch) {
	value := plans.Arg{Kind: plans.ArgArena, Offset: 4096}
	other := plans.Arg{Kind: plans.ArgArena, Offset: 8192}
	s := newKernelSet()
	var ls []plans.Launch
	for i, st := range steps {
		k := &instance{Fn: "qkv_mma", TArgs: rowsColsArgs{Rows: int64(i)}, LaunchesAtEnd: st.atEnd,
			Params: []param{{cIn, "a"}, {cOut, "y"}}}
		if st.wrapperWaits {
			k.Fn = "add"
		}
		y := other
		if st.writes {
			y = value
		}
		ls = append(ls, plans.Launch{Kernel: s.add(k), Args: []plans.Arg{value, y}})
	}
	reader := &instance{Fn: fn, TArgs: targs, Params: []param{{cWeight, "w"}, {cOut, "y"}, {cIn, read}}}
	ls = append(ls, plans.Launch{Kernel: s.add(reader), Args: []plans.Arg{{Kind: plans.ArgWeight}, other, value}})
	return s, ls
}

// owners are the nodes of schedule ls's launches, each its own; the
// reader's, the last, records record where it is not "".
func owners(ls []plans.Launch, record string) []*ir.Node {
	ns := make([]*ir.Node, len(ls))
	for i := range ns {
		ns[i] = &ir.Node{ID: i, Op: ir.OpAdd, Attrs: map[string]any{}}
	}
	if record != "" {
		ns[len(ns)-1].Attrs[record] = true
	}
	return ns
}

// TestReadsBeforeWait: a read moves before the reader's wait where its
// node records it (residual_before_wait, pick_early), and only there; a
// record is refused unless the value's last writer has completed when the
// reader starts: a launch at its end from the writer on, or a launch
// waiting in its wrapper after the writer.
func TestReadsBeforeWait(t *testing.T) {
	inside, wrapper := step{}, step{wrapperWaits: true}
	writer := func(s step) step { s.writes = true; return s }
	atEnd := func(s step) step { s.atEnd = true; return s }
	cases := []struct {
		name  string
		steps []step
		early bool
	}{
		{"writer at its end", []step{writer(atEnd(inside)), inside}, true},
		{"a launch at its end after the writer", []step{writer(inside), atEnd(inside)}, true},
		{"a launch waiting in its wrapper after the writer", []step{writer(inside), wrapper}, true},
		{"the writer waiting in its wrapper", []step{writer(wrapper), inside}, false},
		{"every launch waiting inside", []step{writer(inside), inside}, false},
		{"the writer is the reader's predecessor", []step{inside, writer(inside)}, false},
		{"at its end before the last writer", []step{writer(atEnd(inside)), writer(inside)}, false},
		{"no writer in the schedule", []step{atEnd(inside), atEnd(inside)}, false},
	}
	w := accessor{dtype: ir.Q4_K, blocks: 1}
	linear := linearQ8Args{W: w, B: noWeight, In: 64, Out: 64, S: 32, Res: resAfterWait, dotTail: dotTail{Early: true, TT: 1}}
	early := linear
	early.Res = resBeforeWait
	down := moeDownArgs{Cfg: "Cfg", W: w, B: noWeight, Rows: 4}
	readers := []struct {
		fn, param, record string
		after, early      any
	}{
		{"linear_q8", "r", "residual_before_wait", linear, early},
		{"moe_down_sum_q8", "logit", "pick_early", down, moeDownArgs{Cfg: "Cfg", W: w, B: noWeight, PickEarly: true, Rows: 4}},
	}
	for _, r := range readers {
		for _, c := range cases {
			s, ls := schedule(c.steps, r.fn, r.param, r.after)
			last := len(ls) - 1
			err := s.readsBeforeWait(ls, owners(ls, r.record))
			if refused := err != nil; refused == c.early {
				t.Errorf("%s, %s: recorded, error %v", r.fn, c.name, err)
				continue
			}
			if got := s.byName[ls[last].Kernel].TArgs; err == nil && got != r.early {
				t.Errorf("%s, %s: template arguments %v, want %v", r.fn, c.name, got, r.early)
			}
			s, ls = schedule(c.steps, r.fn, r.param, r.after)
			if err := s.readsBeforeWait(ls, owners(ls, "")); err != nil {
				t.Errorf("%s, %s: not recorded: %v", r.fn, c.name, err)
			}
			if got := s.byName[ls[last].Kernel].TArgs; got != r.after {
				t.Errorf("%s, %s, not recorded: template arguments %v, want %v", r.fn, c.name, got, r.after)
			}
		}
	}
	// A record on a linear_q8 without a residual is refused.
	none := linear
	none.Res = resNone
	s, ls := schedule([]step{writer(atEnd(inside))}, "linear_q8", "r", none)
	if err := s.readsBeforeWait(ls, owners(ls, "residual_before_wait")); err == nil || !strings.Contains(err.Error(), "reads nothing after its wait") {
		t.Errorf("residual_before_wait on a linear_q8 without a residual: %v, want a refusal", err)
	}
}

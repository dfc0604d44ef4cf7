package cuda

import (
	"fmt"
	"strings"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// earlyReader is a family's template arguments where the kernel reads a
// value an earlier grid writes after its wait, a read that may move before
// the wait: linear_q8's residual (off the chain after the wait, the dots
// and their block sums, where it was one more round trip to L2; Phi-3-mini's
// o-projs read the previous layer's down's sum, its downs the o-proj's) and
// moe_down_sum_q8's router logits (its experts' weight groups are fetched
// before the wait, overlapping gate+up's last blocks).
type earlyReader interface {
	// readAfterWait is the parameter read after the wait, if there is one.
	readAfterWait() (param string, ok bool)
	// readingBeforeWait are the arguments of the variant reading it
	// before the wait.
	readingBeforeWait() any
	// record is the node attribute recording that the read moves.
	record() string
}

func (a linearQ8Args) readAfterWait() (string, bool) { return "r", a.Res == resAfterWait }
func (a linearQ8Args) readingBeforeWait() any        { a.Res = resBeforeWait; return a }
func (a linearQ8Args) record() string                { return "residual_before_wait" } // chooseEarlyResiduals
func (a moeDownArgs) readAfterWait() (string, bool)  { return "logit", !a.PickEarly }
func (a moeDownArgs) readingBeforeWait() any         { a.PickEarly = true; return a }
func (a moeDownArgs) record() string                 { return "pick_early" } // chooseEarlyPicks

// overlapRecords are the records that overlap decode grids
// (chooseLateStarts, chooseEarlyPicks, chooseEarlyResiduals).
var overlapRecords = []string{"starts_late", "launch_at_end", "quantize_at_end", "pick_early", "residual_before_wait"}

// overlapDecode prints the records that overlap decode schedule ls's grids
// (owners: each launch's node): the launches at their end (launchAtEnd),
// then the reads before the wait (readsBeforeWait). A target without
// dependent launch (sm_80) takes none.
func (s *kernelSet) overlapDecode(ls []plans.Launch, owners []*ir.Node, dependentLaunch bool, arch string) error {
	if dependentLaunch {
		if err := s.launchAtEnd(ls, owners); err != nil {
			return err
		}
		return s.readsBeforeWait(ls, owners)
	}
	for _, n := range owners {
		for _, k := range overlapRecords {
			if n.Bool(k) {
				return fmt.Errorf("%s recorded for %s, which has no dependent launch: run the pass pipeline for %s", k, arch, arch)
			}
		}
	}
	return nil
}

// readsBeforeWait gives each decode launch of ls with an earlyReader read
// after its wait whose node (owners[i]) records that the read moves its
// variant reading before the wait, refusing the record where the value's
// last writer before it may not have completed when it starts
// (completeAt), or where the launch reads nothing after its wait.
func (s *kernelSet) readsBeforeWait(ls []plans.Launch, owners []*ir.Node) error {
	for i := range ls {
		k := s.byName[ls[i].Kernel]
		r, ok := k.TArgs.(earlyReader)
		if !ok || !owners[i].Bool(r.record()) {
			continue
		}
		param, after := r.readAfterWait()
		if !after {
			return fmt.Errorf("decode launch %d (%s) of node %d records %s, but reads nothing after its wait", i, k.Fn, owners[i].ID, r.record())
		}
		v := ls[i].Args[paramIndex(k, param)]
		complete := false
		for j := i - 1; j >= 0; j-- {
			if writes(s.byName[ls[j].Kernel], &ls[j], v) {
				complete = s.completeAt(ls, j, i)
				break
			}
		}
		if !complete {
			return fmt.Errorf("decode launch %d (%s) of node %d records %s, but the writer of its %s may not have completed when it starts", i, k.Fn, owners[i].ID, r.record(), param)
		}
		early := *k
		early.TArgs = r.readingBeforeWait()
		ls[i].Kernel = s.add(&early)
	}
	return nil
}

// completeAt reports whether launch j of decode schedule ls has completed
// when launch i > j starts. Every grid waits for the one before it to
// complete (grid_dep_wait; TestEveryKernelWaits) and completes after its
// wait, so a grid's completion implies every earlier one's. Launch m + 1
// starts after m completes where m lets it launch only at its end
// (LaunchesAtEnd, m in [j, i)), and after m's wait, so after m − 1
// completes, where m waits in its wrapper before letting it launch
// (wrappers.cu.tmpl, m in (j, i)).
func (s *kernelSet) completeAt(ls []plans.Launch, j, i int) bool {
	for m := j; m < i; m++ {
		k := s.byName[ls[m].Kernel]
		if k.LaunchesAtEnd || (m > j && !k.WaitsInside()) {
			return true
		}
	}
	return false
}

// paramIndex is the index of k's parameter name; its launches' arguments
// are in the same order.
func paramIndex(k *instance, name string) int {
	for i, p := range k.Params {
		if p.name == name {
			return i
		}
	}
	panic("codegen/cuda: kernel " + k.Name + " has no parameter " + name)
}

// writes: launch l of kernel k passes a to a parameter it may write.
func writes(k *instance, l *plans.Launch, a plans.Arg) bool {
	for i, p := range k.Params {
		if l.Args[i] == a && !strings.HasPrefix(p.ctype, "const ") {
			return true
		}
	}
	return false
}

package cuda

import (
	"fmt"
	"strings"

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
	// recorded: the IR decides whether the read moves (a record on the
	// launch's node), which the schedule must then prove; else the
	// schedule decides.
	recorded() bool
}

func (a linearQ8Args) readAfterWait() (string, bool) { return "r", a.Res == resAfterWait }
func (a linearQ8Args) readingBeforeWait() any        { a.Res = resBeforeWait; return a }
func (a moeDownArgs) readAfterWait() (string, bool)  { return "logit", !a.PickEarly }
func (a moeDownArgs) readingBeforeWait() any         { a.PickEarly = true; return a }
func (a linearQ8Args) recorded() bool                { return false }
func (a moeDownArgs) recorded() bool                 { return true } // pick_early, chooseEarlyPicks

// readsBeforeWait gives each decode launch of ls with an earlyReader read after
// its wait its variant reading before the wait, where the value's last
// writer before it has completed when it starts (completeAt): for a
// linear_q8's residual wherever that holds, for a recorded reader where
// its node records it (recorded, the launches at those indexes), refusing
// a record that does not hold.
func (s *kernelSet) readsBeforeWait(ls []plans.Launch, recorded map[int]bool) error {
	for i := range ls {
		k := s.byName[ls[i].Kernel]
		r, ok := k.TArgs.(earlyReader)
		if !ok {
			continue
		}
		param, after := r.readAfterWait()
		if !after || r.recorded() && !recorded[i] {
			continue
		}
		v := ls[i].Args[paramIndex(k, param)]
		complete := false
		for j := i - 1; j >= 0; j-- {
			if writes(s.byName[ls[j].Kernel], &ls[j], v) {
				complete = s.completeAt(ls, j, i)
				break
			}
		}
		if !complete && r.recorded() {
			return fmt.Errorf("decode launch %d (%s) is recorded to read %s before its wait, but its writer may not have completed when it starts", i, k.Fn, param)
		}
		if complete {
			early := *k
			early.TArgs = r.readingBeforeWait()
			ls[i].Kernel = s.add(&early)
		}
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

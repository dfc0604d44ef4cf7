package cuda

import (
	"strings"

	"github.com/llama-orch/orc/plans"
)

// linear_q8's template argument RES (q8.cu.tmpl): no residual, the residual
// read after the kernel's wait, or before it.
const (
	resNone       = "0"
	resAfterWait  = "1"
	resBeforeWait = "2"
	linearResArg  = 7 // RES's index in linear_q8's template arguments
)

// resRead is RES for a linear_q8 that adds a residual (has) or not; which
// reads may move before the wait is decided on the decode schedule
// (readsBeforeWait).
func resRead(has bool) string {
	if has {
		return resAfterWait
	}
	return resNone
}

// moe_down_sum_q8's template argument PICK_EARLY (moe.cu.tmpl): the experts
// picked from the router logits after the kernel's wait, or before it.
const (
	pickLate   = "false"
	pickEarly  = "true"
	moePickArg = 3 // PICK_EARLY's index in moe_down_sum_q8's template arguments
)

// earlyRead is a kernel's read of a value an earlier grid writes that may
// move before its wait: the parameter read, and the template argument
// (index, value after the wait, value before it) that moves it.
type earlyRead struct {
	param         string
	arg           int
	after, before string
}

// earlyReads are those reads, by device function: linear_q8's residual (off
// the chain after the wait, the dots and their block sums, where it was one
// more round trip to L2; Phi-3-mini's o-projs read the previous layer's
// down's sum, its downs the o-proj's) and moe_down_sum_q8's router logits
// (its experts' weight groups are fetched before the wait, overlapping
// gate+up's last blocks).
var earlyReads = map[string]earlyRead{
	"linear_q8":       {"r", linearResArg, resAfterWait, resBeforeWait},
	"moe_down_sum_q8": {"logit", moePickArg, pickLate, pickEarly},
}

// readsBeforeWait gives each decode launch of ls with an earlyRead after
// its wait its variant reading before the wait, where the value's last
// writer before it has completed when it starts (completeAt).
func (s *kernelSet) readsBeforeWait(ls []plans.Launch) {
	for i := range ls {
		k := s.byName[ls[i].Kernel]
		r, ok := earlyReads[k.Fn]
		if !ok || k.TArgs[r.arg] != r.after {
			continue
		}
		v := ls[i].Args[paramIndex(k, r.param)]
		for j := i - 1; j >= 0; j-- {
			if !writes(s.byName[ls[j].Kernel], &ls[j], v) {
				continue
			}
			if s.completeAt(ls, j, i) {
				early := *k
				early.TArgs = append([]string(nil), k.TArgs...)
				early.TArgs[r.arg] = r.before
				ls[i].Kernel = s.add(&early)
			}
			break
		}
	}
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

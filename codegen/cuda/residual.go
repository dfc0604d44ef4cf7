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
// (residualsBeforeWait).
func resRead(has bool) string {
	if has {
		return resAfterWait
	}
	return resNone
}

// residualsBeforeWait gives each decode linear_q8 launch of ls that reads its
// residual after its wait, where the grid that wrote the residual has
// completed before that launch starts, its variant reading it before the
// wait: off the chain after the wait (the dots, their block sums), where it
// was one more round trip to L2. A launch without grid_dep_launch
// (LaunchesAtEnd) lets the next grid launch only once it completes, and
// every grid completes after its wait, so after every grid before it: a
// launch after it finds every launch up to it complete. Phi-3-mini's
// o-projs read the previous layer's down's sum (that down launches qkv_mma
// at its end), its downs the o-proj's (which launches swiglu_mma at its
// end).
func (s *kernelSet) residualsBeforeWait(ls []plans.Launch) {
	for i := range ls {
		k := s.byName[ls[i].Kernel]
		if k.Fn != "linear_q8" || k.TArgs[linearResArg] != resAfterWait {
			continue
		}
		r := ls[i].Args[paramIndex(k, "r")]
		complete := false
		for j := i - 1; j >= 0; j-- {
			w := s.byName[ls[j].Kernel]
			complete = complete || w.LaunchesAtEnd
			if !writes(w, &ls[j], r) {
				continue
			}
			if complete {
				v := *k
				v.TArgs = append([]string(nil), k.TArgs...)
				v.TArgs[linearResArg] = resBeforeWait
				ls[i].Kernel = s.add(&v)
			}
			break
		}
	}
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

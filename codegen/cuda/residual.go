package cuda

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

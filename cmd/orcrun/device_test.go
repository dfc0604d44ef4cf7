package main

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/plans"
)

// --slots above 1 on the cuda device needs the plan's batched step; the
// CPU device batches any plan.
func TestBatchable(t *testing.T) {
	with := &plans.Plan{Dir: "new", Manifest: plans.Manifest{Target: "sm_90", Kernels: &plans.Kernels{Batch: []plans.Launch{{Kernel: "k"}}}}}
	without := &plans.Plan{Dir: "old", Manifest: plans.Manifest{Target: "sm_90", Kernels: &plans.Kernels{Prefill: []plans.Launch{{Kernel: "k"}}}}}
	if err := batchable("cuda", with); err != nil {
		t.Errorf("a plan with a batched step: %v", err)
	}
	if err := batchable("cpu", without); err != nil {
		t.Errorf("the cpu device: %v", err)
	}
	if err := batchable("cuda", without); err == nil || !strings.Contains(err.Error(), "plan old has no batched step for the cuda device: recompile it") {
		t.Errorf("a plan without a batched step: %v", err)
	}
}

package cuda

import (
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// stream is a kernel's weight stream (passes.Stream: the chooseKernels
// pass's for a tensor-core kernel, passes.GPU.Streams' for a swiglu_q8).
type stream passes.Stream

// launch sets the stream's shared memory on the kernel's launch, the last
// of ls.
func (s stream) launch(ls []plans.Launch, err error) ([]plans.Launch, error) {
	if err == nil && len(ls) > 0 {
		ls[len(ls)-1].Smem = int(s.Smem)
	}
	return ls, err
}

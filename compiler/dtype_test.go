package compiler

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// TestDTypeGeometry: a weight's type is read once from GGUF (irDType) and
// is an ir.DType from there to the kernels' accessors, so the IR's block
// geometry must be the ggml type's for every type a graph can hold.
func TestDTypeGeometry(t *testing.T) {
	for gt, dt := range dtypeOf {
		if int64(gt.BlockSize()) != ir.BlockElems(dt) || int64(gt.BlockBytes()) != ir.BlockBytes(dt) {
			t.Errorf("%s: ggml blocks of %d elements in %d bytes, %s's of %d in %d", gt, gt.BlockSize(), gt.BlockBytes(), dt, ir.BlockElems(dt), ir.BlockBytes(dt))
		}
	}
}

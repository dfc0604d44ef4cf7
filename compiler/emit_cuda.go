package compiler

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// emitCUDA generates the plan's kernels for a CUDA target and returns the
// plan files they live in.
func emitCUDA(g *ir.Graph, man *plans.Manifest, o Options) (map[string][]byte, error) {
	return nil, fmt.Errorf("compiler: CUDA code generation for %s is not wired in yet; compile with --device cpu", o.Target)
}

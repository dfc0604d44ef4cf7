package cuda

import (
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// GenerateTuned is Generate with tune applied to the target's description
// first: the GPU tests check and time decode attention tunings other than
// the target's (the split rule's clusters, stages and fewest keys).
func GenerateTuned(g *ir.Graph, m *plans.Manifest, o Options, tune func(*passes.GPU)) (*Output, error) {
	return generate(g, m, o, tune)
}

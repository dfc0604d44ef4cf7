package passes

import "github.com/llama-orch/orc/ir"

// verify checks the graph against the op table and shape rules. It runs first,
// to reject a bad lowering before any pass trusts it, and last, to check
// the planned graph a plan stores.
func verify(g *ir.Graph) error { return ir.Verify(g) }

package passes

import (
	"strings"

	"github.com/llama-orch/orc/ir"
)

// eliminateCommon merges nodes that compute the same value: same op,
// dtype, shape, inputs and attributes (two weight nodes of one tensor, two
// views of one part, a norm lowered twice). Attention nodes never match:
// ir.Verify allows one per layer. Later passes then see one producer per
// value, which is what lets fuseQKV recognise three linears of one input.
func eliminateCommon(g *ir.Graph) error {
	seen := map[string]*ir.Node{}
	dead := map[*ir.Node]bool{}
	for _, n := range g.Nodes {
		key := valueKey(n)
		if first, ok := seen[key]; ok {
			replaceUses(g, n, first)
			dead[n] = true
			continue
		}
		seen[key] = n
	}
	removeNodes(g, dead)
	return nil
}

// valueKey is the node's text form without its own id ("linear(%10, %3)
// f32[T,896] {...}"); its inputs are already merged because nodes are
// visited in schedule order.
func valueKey(n *ir.Node) string {
	s := n.String()
	return s[strings.Index(s, " = ")+3:]
}

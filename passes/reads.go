package passes

import (
	"slices"

	"github.com/llama-orch/orc/ir"
)

// NormedPart is the view of add_rmsnorm n's part 1, its normed row, among
// n's readers (users maps a node to its readers), or nil: ir.NormBehind's
// inverse.
func NormedPart(n *ir.Node, users map[*ir.Node][]*ir.Node) *ir.Node {
	for _, u := range users[n] {
		if u.Op == ir.OpView && u.Int("part") == 1 {
			return u
		}
	}
	return nil
}

// normFolded reports whether decode norm n launches nothing: the one
// reader of its normed row folds the norm in (fold_norm) and reads the
// norm's inputs itself.
func normFolded(n *ir.Node, users map[*ir.Node][]*ir.Node) bool {
	v := n
	if n.Op == ir.OpAddRMSNorm || n.Op == ir.OpAddPostNorm {
		v = NormedPart(n, users)
	}
	if v == nil || ir.NormBehind(v) != n || len(users[v]) != 1 {
		return false
	}
	u := users[v][0]
	return u.Inputs[0] == v && u.Bool("fold_norm")
}

// readsOf are the values whose buffers node n reads: its inputs, and where
// n's decode kernel folds the norm of its row in (fold_norm, chooseKernels),
// the norm's inputs too; where an attention folds its q/k norms
// (fold_qk_norm, chooseQKNormFolds), the norm_ropes' inputs.
func readsOf(n *ir.Node) []*ir.Node {
	if n.Bool("fold_qk_norm") {
		qn, kn, _ := ir.QKNormInputs(n)
		return append(slices.Concat(n.Inputs, qn.Inputs), kn.Inputs...)
	}
	if !n.Bool("fold_norm") {
		return n.Inputs
	}
	norm := ir.NormBehind(n.Inputs[0])
	if norm == nil {
		return n.Inputs
	}
	return append(slices.Clone(n.Inputs), norm.Inputs...)
}

// ResidualWriter is the linear that writes add_rmsnorm n's sum itself in
// decode (writes_sum, chooseKernels), adding the residual (n's other
// input) into its outputs, and that residual; nil otherwise. users maps a
// node to its readers. n's buffer then lives from that linear on (defsOf).
func ResidualWriter(n *ir.Node, users map[*ir.Node][]*ir.Node) (linear, residual *ir.Node) {
	if l, r := residualWriter(n, users); l != nil && l.Bool("writes_sum") {
		return l, r
	}
	return nil, nil
}

// residualWriter is the linear that may write add_rmsnorm n's sum: one of
// n's two inputs when it is a linear that n alone reads and n's normed row
// has one reader, which folds the norm in (fold_norm) and then reads the
// sum alone; and the residual, n's other input. nil otherwise.
func residualWriter(n *ir.Node, users map[*ir.Node][]*ir.Node) (linear, residual *ir.Node) {
	if n.Op != ir.OpAddRMSNorm {
		return nil, nil
	}
	if !normFolded(n, users) {
		return nil, nil
	}
	for k := range 2 {
		if l := n.Inputs[k]; l.Op == ir.OpLinear && len(users[l]) == 1 && n.Inputs[1-k] != l {
			return l, n.Inputs[1-k]
		}
	}
	return nil, nil
}

// defsOf is the schedule index where each node's buffer starts to live: its
// own, except an add_rmsnorm's whose sum a linear may write
// (ResidualWriter): that linear's.
func defsOf(g *ir.Graph) map[*ir.Node]int {
	at := map[*ir.Node]int{}
	for i, n := range g.Nodes {
		at[n] = i
	}
	readers := users(g)
	defs := map[*ir.Node]int{}
	for i, n := range g.Nodes {
		defs[n] = i
		if l, _ := ResidualWriter(n, readers); l != nil {
			defs[n] = at[l]
		}
	}
	return defs
}

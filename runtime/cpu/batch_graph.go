package cpu

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
)

// batchGraph is a plan's graph rewritten for batched steps. A plan's graph
// ends per token at its one last node, then computes one row (the final
// norm and the LM head). The batched graph drops last: its consumers read
// last's input, and every node after it has T rows, so that after the
// step's per-token part the program gathers each sequence's last row into
// rows 0..n-1 of that input and runs the tail for n rows, each weight read
// once for all sequences. The memory plan is dropped (its offsets hold one
// row after last) and max_tokens is the step's token budget.
type batchGraph struct {
	g *ir.Graph
	// gather is the former last's input: the buffer the sequences' last
	// rows are gathered in.
	gather *ir.Node
	// tail is the nodes after last, which run one row per sequence.
	tail map[*ir.Node]bool
}

func newBatchGraph(text string, stepTokens int) (*batchGraph, error) {
	g, err := ir.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("cpu: the plan's graph: %w", err)
	}
	at := -1
	for i, n := range g.Nodes {
		if n.Op == ir.OpLast {
			if at >= 0 {
				return nil, fmt.Errorf("cpu: batched steps need one last node; the graph has %%%d and %%%d", g.Nodes[at].ID, n.ID)
			}
			at = i
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("cpu: batched steps need the graph's last node; it has none")
	}
	last := g.Nodes[at]
	b := &batchGraph{gather: last.Inputs[0], tail: map[*ir.Node]bool{}}
	nodes := append([]*ir.Node(nil), g.Nodes[:at]...)
	for _, n := range g.Nodes[at+1:] {
		if n.Op == ir.OpWeight {
			nodes = append(nodes, n)
			continue
		}
		for i, in := range n.Inputs {
			switch {
			case in == last:
				n.Inputs[i] = b.gather
			case in.Op != ir.OpWeight && !b.tail[in]:
				// Gathering overwrites the per-token rows; a tail that read
				// them would see the gathered ones.
				return nil, fmt.Errorf("cpu: batched steps need the nodes after last to read only last and each other; %%%d %s reads %%%d", n.ID, n.Op, in.ID)
			}
		}
		if n.Shape[0] != 1 {
			return nil, fmt.Errorf("cpu: batched steps need the nodes after last to have one row; %%%d %s has %v", n.ID, n.Op, n.Shape)
		}
		n.Shape[0] = ir.T
		b.tail[n] = true
		nodes = append(nodes, n)
	}
	for i, o := range g.Outputs {
		if o == last {
			g.Outputs[i] = b.gather
		}
	}
	g.Nodes = nodes
	delete(g.Attrs, "arena_bytes")
	for _, n := range g.Nodes {
		delete(n.Attrs, "offset")
	}
	g.Attrs["max_tokens"] = int64(stepTokens)
	b.g = g
	return b, nil
}

package compiler

import (
	"fmt"
	"slices"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// WeightTable lists the tensors the graph's weights read, each once, in the
// order nodes first read them, which is the order the runtime uploads them.
// A row-range weight node (ir weight rows=[first, count], made by fuseQKV
// from a packed attn_qkv) reads part of a tensor: the table holds the whole
// tensor once and the node resolves to a span of it (plans.Tensor.Rows), so
// weights.bin has no duplicate bytes.
func WeightTable(g *ir.Graph, f *gguf.File) ([]plans.Tensor, error) {
	var table []plans.Tensor
	index := map[string]int{}
	readers := map[string][]*ir.Node{} // the weight nodes of each tensor
	seen := map[*ir.Node]bool{}
	for _, n := range g.Nodes {
		for _, w := range n.Inputs {
			if w.Op != ir.OpWeight || seen[w] {
				continue
			}
			seen[w] = true
			name := w.Str("name")
			if _, ok := index[name]; !ok {
				info, ok := f.Tensor(name)
				if !ok {
					return nil, fmt.Errorf("compiler: graph reads weight %s, which %s lacks", name, f.Path)
				}
				dt, err := irDType(info.Type)
				if err != nil {
					return nil, fmt.Errorf("compiler: tensor %s: %w", name, err)
				}
				index[name] = len(table)
				table = append(table, plans.Tensor{
					Name: name, DType: dt.String(), Shape: rowMajor(info.Dims),
					Layout: w.Str("layout"), Bytes: int64(info.Bytes()),
				})
			}
			readers[name] = append(readers[name], w)
		}
	}
	for i := range table {
		if err := checkReaders(&table[i], readers[table[i].Name]); err != nil {
			return nil, fmt.Errorf("compiler: %w", err)
		}
	}
	return table, nil
}

// checkReaders checks every weight node of tensor t against it: one dtype
// and one layout for all, whole-tensor shapes, row ranges inside the
// tensor. Under a GPU layout a row range gets its own segment (the layout
// regroups blocks within each segment as if it were a tensor), so the range
// is one span of the laid-out bytes and its kernel addresses it as a whole
// tensor; a whole-tensor reader beside ranges would need the other grouping
// and is refused.
func checkReaders(t *plans.Tensor, nodes []*ir.Node) error {
	var ranged, whole bool
	bounds := []int64{0, t.Shape[0]} // row boundaries of the segments
	for _, w := range nodes {
		if w.DType.String() != t.DType || w.Str("layout") != t.Layout {
			return fmt.Errorf("weight %s is %s layout %q in one node and %s layout %q in another", t.Name, w.DType, w.Str("layout"), t.DType, t.Layout)
		}
		first, count, ok := w.RowRange()
		want := ir.Shape(t.Shape)
		if ok {
			want = append(ir.Shape{count}, want[1:]...)
			if _, _, err := t.Rows(first, count); err != nil {
				return fmt.Errorf("weight node %%%d: %w", w.ID, err)
			}
			bounds = append(bounds, first, first+count)
			ranged = true
		} else {
			whole = true
		}
		if !w.Shape.Equal(want) {
			return fmt.Errorf("weight node %%%d of %s is %v, want %v", w.ID, t.Name, w.Shape, want)
		}
	}
	if !ranged || t.Layout == "" {
		return nil
	}
	if whole {
		return fmt.Errorf("weight %s is read whole and by row ranges under layout %s", t.Name, t.Layout)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	for i := 1; i < len(bounds); i++ {
		t.Segments = append(t.Segments, bounds[i]-bounds[i-1])
	}
	for _, w := range nodes {
		first, count, _ := w.RowRange()
		if _, _, err := t.Rows(first, count); err != nil {
			return fmt.Errorf("weight node %%%d: overlapping row ranges: %w", w.ID, err)
		}
	}
	return nil
}

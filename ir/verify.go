package ir

import (
	"errors"
	"fmt"
	"strings"
)

// Verify checks g against the op table and the shape rules of every op:
// IDs unique, inputs defined before their use, input counts in range,
// required attributes present with the right types, dtypes and shapes as
// each op's rule says, outputs in the graph, graph attr max_tokens present.
// Errors name the node, e.g. "%12 linear: weight in-dim 64 ≠ input cols 896".
func Verify(g *Graph) error {
	if g == nil {
		return errors.New("nil graph")
	}
	if err := checkAttrValues("graph", g.Attrs, graphAttrKinds); err != nil {
		return err
	}
	mt, ok := g.Attrs["max_tokens"].(int64)
	if !ok {
		return errors.New("graph: attr max_tokens (int64) missing")
	}
	if mt <= 0 {
		return fmt.Errorf("graph: max_tokens %d ≤ 0", mt)
	}
	defined := make(map[*Node]bool, len(g.Nodes))
	ids := make(map[int]bool, len(g.Nodes))
	cacheOwner := map[int64]*Node{} // layer → its attention
	for _, n := range g.Nodes {
		if n == nil {
			return errors.New("graph: nil node")
		}
		if err := verifyNode(n, ids, defined); err != nil {
			return fmt.Errorf("%%%d %s: %w", n.ID, n.Op, err)
		}
		ids[n.ID] = true
		defined[n] = true
		if n.Op == OpAttention {
			// Each layer's KV cache has one writer; a second would
			// overwrite the first's keys and values.
			if first, dup := cacheOwner[n.Int("layer")]; dup {
				return fmt.Errorf("%%%d attention: layer %d's KV cache is already written by %%%d", n.ID, n.Int("layer"), first.ID)
			}
			cacheOwner[n.Int("layer")] = n
		}
	}
	for i, o := range g.Outputs {
		if o == nil || !defined[o] {
			return fmt.Errorf("graph: output %d is not a node of the graph", i)
		}
	}
	if err := verifyQKNormFolds(g); err != nil {
		return err
	}
	if err := verifyKVCache(g); err != nil {
		return err
	}
	return verifyLateStarts(g)
}

func verifyNode(n *Node, ids map[int]bool, defined map[*Node]bool) error {
	if n.ID < 0 {
		return errors.New("negative id")
	}
	if ids[n.ID] {
		return errors.New("id used twice")
	}
	info, ok := Ops[n.Op]
	if !ok {
		return errors.New("op not in the op table")
	}
	if len(n.Inputs) < info.MinInputs || len(n.Inputs) > info.MaxInputs {
		return fmt.Errorf("%d inputs, want %d..%d", len(n.Inputs), info.MinInputs, info.MaxInputs)
	}
	for i, in := range n.Inputs {
		if in == nil {
			return fmt.Errorf("input %d is nil", i)
		}
		if !defined[in] {
			return fmt.Errorf("input %d (%%%d) is not defined before this use", i, in.ID)
		}
	}
	if int(n.DType) > int(None) {
		return fmt.Errorf("bad dtype %d", n.DType)
	}
	for i, d := range n.Shape {
		if d == T && i != 0 {
			return fmt.Errorf("shape %v: T only as the first dimension", n.Shape)
		}
		if d != T && d <= 0 {
			return fmt.Errorf("shape %v: dimension %d ≤ 0", n.Shape, d)
		}
	}
	if err := checkAttrValues("attr", n.Attrs, attrKinds); err != nil {
		return err
	}
	if err := verifyKernelChoice(n); err != nil {
		return err
	}
	if err := verifyDecodeAttention(n); err != nil {
		return err
	}
	if err := verifyPagedAttention(n); err != nil {
		return err
	}
	if err := verifyPrefillSplits(n); err != nil {
		return err
	}
	if err := verifyMoETiles(n); err != nil {
		return err
	}
	if err := verifyMoEDownLanes(n); err != nil {
		return err
	}
	if err := verifyMoEDownRows(n); err != nil {
		return err
	}
	if err := verifyGEMMTiles(n); err != nil {
		return err
	}
	for _, k := range info.Attrs {
		if _, ok := n.Attrs[k]; !ok {
			return fmt.Errorf("attr %s missing", k)
		}
	}
	if info.Packed {
		parts := n.Ints("parts")
		if len(parts) == 0 {
			return errors.New("packed node without parts")
		}
		sum := int64(0)
		for _, p := range parts {
			if p <= 0 {
				return fmt.Errorf("parts %v: a part ≤ 0", parts)
			}
			sum += p
		}
		if len(n.Shape) != 2 || n.Shape[1] != sum {
			return fmt.Errorf("shape %v: packed parts %v sum to %d columns", n.Shape, parts, sum)
		}
	}
	return shapeRules[n.Op](n)
}

// checkAttrValues checks value types (the text form carries only these) and
// the types of the well-known keys listed in kinds.
func checkAttrValues(where string, attrs map[string]any, kinds map[string]string) error {
	for k, v := range attrs {
		if k == "" || strings.IndexFunc(k, func(r rune) bool { return r > 127 || !isWordByte(byte(r)) }) >= 0 {
			return fmt.Errorf("%s: bad attribute name %q", where, k)
		}
		kind := typeName(v)
		switch v.(type) {
		case int64, float64, string, bool, []int64, []float64:
		default:
			return fmt.Errorf("%s %s has type %s; want int64, float64, string, bool, []int64 or []float64", where, k, kind)
		}
		if want, ok := kinds[k]; ok && want != kind {
			return fmt.Errorf("%s %s has type %s, want %s", where, k, kind, want)
		}
	}
	return nil
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

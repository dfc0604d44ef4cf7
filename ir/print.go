package ir

import (
	"sort"
	"strconv"
	"strings"
)

// Print renders g in the text form that Parse reads back:
//
//	graph {arch="qwen2" max_tokens=512}
//	%0 = input() i32[T] {name="tokens"}
//	%3 = linear(%1, %2) f32[T,896]
//	outputs(%3)
//
// Attributes are printed sorted by key so that equal graphs print equally;
// floats are printed with the shortest form that parses back to the same bits.
func Print(g *Graph) string {
	var b strings.Builder
	b.WriteString("graph")
	writeAttrs(&b, g.Attrs)
	b.WriteByte('\n')
	for _, n := range g.Nodes {
		writeNode(&b, n)
		b.WriteByte('\n')
	}
	b.WriteString("outputs(")
	for i, o := range g.Outputs {
		if i > 0 {
			b.WriteString(", ")
		}
		writeRef(&b, o)
	}
	b.WriteString(")\n")
	return b.String()
}

// String prints one node as Print would.
func (n *Node) String() string {
	var b strings.Builder
	writeNode(&b, n)
	return b.String()
}

func writeNode(b *strings.Builder, n *Node) {
	b.WriteByte('%')
	b.WriteString(strconv.Itoa(n.ID))
	b.WriteString(" = ")
	b.WriteString(string(n.Op))
	b.WriteByte('(')
	for i, in := range n.Inputs {
		if i > 0 {
			b.WriteString(", ")
		}
		writeRef(b, in)
	}
	b.WriteString(") ")
	b.WriteString(n.DType.String())
	b.WriteString(n.Shape.String())
	writeAttrs(b, n.Attrs)
}

// writeRef prints a reference to a node; a nil input prints as %nil, which
// Parse rejects, so a broken graph never round-trips silently.
func writeRef(b *strings.Builder, n *Node) {
	if n == nil {
		b.WriteString("%nil")
		return
	}
	b.WriteByte('%')
	b.WriteString(strconv.Itoa(n.ID))
}

// String prints a shape as [T,896].
func (s Shape) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		if d == T {
			b.WriteByte('T')
		} else {
			b.WriteString(strconv.FormatInt(d, 10))
		}
	}
	b.WriteByte(']')
	return b.String()
}

func writeAttrs(b *strings.Builder, attrs map[string]any) {
	if len(attrs) == 0 {
		return
	}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString(" {")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(FormatAttr(attrs[k]))
	}
	b.WriteByte('}')
}

// FormatAttr prints one attribute value in the text form. A float always
// carries a '.', an exponent, or Inf/NaN, so it never reads back as an int.
// A value of an unsupported type prints as <badtype T>, which Parse rejects
// (Verify reports it first).
func FormatAttr(v any) string {
	switch v := v.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return formatFloat(v)
	case string:
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case []int64:
		return formatList(v, func(x int64) string { return strconv.FormatInt(x, 10) })
	case []float64:
		return formatList(v, formatFloat)
	}
	return "<badtype " + typeName(v) + ">"
}

// formatList writes [a,b,...].
func formatList[T any](xs []T, format func(T) string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(format(x))
	}
	b.WriteByte(']')
	return b.String()
}

// formatFloat always writes a '.', an exponent, or Inf/NaN.
func formatFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		s += ".0"
	}
	return s
}

package ir

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads the text form that Print writes. Blank lines and lines
// starting with '#' are ignored, so hand-written test graphs can carry
// comments. Node IDs are kept as written; references must name an earlier
// node. Parse checks syntax only; call Verify for the op rules.
func Parse(text string) (*Graph, error) {
	g := New()
	byID := map[int]*Node{}
	sawHeader, sawOutputs := false, false
	for i, line := range strings.Split(text, "\n") {
		lineNo := i + 1
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if sawOutputs {
			return nil, fmt.Errorf("line %d: text after the outputs line", lineNo)
		}
		s := &scanner{src: line}
		var err error
		switch {
		case !sawHeader:
			err = s.header(g)
			sawHeader = true
		case strings.HasPrefix(line, "outputs"):
			err = s.outputs(g, byID)
			sawOutputs = true
		default:
			err = s.node(g, byID)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
	}
	if !sawHeader {
		return nil, fmt.Errorf("no graph header line")
	}
	if !sawOutputs {
		return nil, fmt.Errorf("no outputs line")
	}
	return g, nil
}

// scanner reads one line of the text form.
type scanner struct {
	src string
	pos int
}

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("col %d: %s", s.pos+1, fmt.Sprintf(format, args...))
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.src) && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
}

func (s *scanner) peek() byte {
	s.skipSpace()
	if s.pos < len(s.src) {
		return s.src[s.pos]
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		if s.pos >= len(s.src) {
			return s.errorf("want %q, got end of line", c)
		}
		return s.errorf("want %q, got %q", c, s.src[s.pos])
	}
	s.pos++
	return nil
}

func (s *scanner) end() error {
	if s.peek() != 0 {
		return s.errorf("unexpected %q", s.src[s.pos:])
	}
	return nil
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || c == '-' || c == '+' ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// word reads a run of identifier/number bytes.
func (s *scanner) word() string {
	s.skipSpace()
	start := s.pos
	for s.pos < len(s.src) && isWordByte(s.src[s.pos]) {
		s.pos++
	}
	return s.src[start:s.pos]
}

func (s *scanner) header(g *Graph) error {
	if w := s.word(); w != "graph" {
		return s.errorf("want the header line \"graph {...}\", got %q", w)
	}
	attrs, err := s.attrs()
	if err != nil {
		return err
	}
	g.Attrs = attrs
	return s.end()
}

func (s *scanner) outputs(g *Graph, byID map[int]*Node) error {
	s.word() // "outputs"
	refs, err := s.refList(byID)
	if err != nil {
		return err
	}
	g.Outputs = refs
	return s.end()
}

// node reads `%12 = linear(%10, %3) f32[T,896] {k=v ...}`.
func (s *scanner) node(g *Graph, byID map[int]*Node) error {
	id, err := s.id()
	if err != nil {
		return err
	}
	if _, dup := byID[id]; dup {
		return s.errorf("node %%%d defined twice", id)
	}
	if err := s.expect('='); err != nil {
		return err
	}
	op := s.word()
	if op == "" {
		return s.errorf("want an op name")
	}
	inputs, err := s.refList(byID)
	if err != nil {
		return err
	}
	dtName := s.word()
	dt, ok := ParseDType(dtName)
	if !ok {
		return s.errorf("unknown dtype %q", dtName)
	}
	shape, err := s.shape()
	if err != nil {
		return err
	}
	attrs, err := s.attrs()
	if err != nil {
		return err
	}
	if err := s.end(); err != nil {
		return err
	}
	n := &Node{ID: id, Op: Op(op), DType: dt, Shape: shape, Inputs: inputs, Attrs: attrs}
	g.Nodes = append(g.Nodes, n)
	byID[id] = n
	if id >= g.nextID {
		g.nextID = id + 1
	}
	return nil
}

func (s *scanner) id() (int, error) {
	if err := s.expect('%'); err != nil {
		return 0, err
	}
	w := s.word()
	id, err := strconv.Atoi(w)
	if err != nil || id < 0 {
		return 0, s.errorf("bad node id %%%s", w)
	}
	return id, nil
}

// refList reads `(%1, %2)`; every reference must name an earlier node.
func (s *scanner) refList(byID map[int]*Node) ([]*Node, error) {
	if err := s.expect('('); err != nil {
		return nil, err
	}
	var refs []*Node
	for s.peek() != ')' {
		if len(refs) > 0 {
			if err := s.expect(','); err != nil {
				return nil, err
			}
		}
		id, err := s.id()
		if err != nil {
			return nil, err
		}
		n, ok := byID[id]
		if !ok {
			return nil, s.errorf("%%%d is not defined before this use", id)
		}
		refs = append(refs, n)
	}
	s.pos++ // ')'
	return refs, nil
}

// shape reads `[T,896]`.
func (s *scanner) shape() (Shape, error) {
	if err := s.expect('['); err != nil {
		return nil, err
	}
	shape := Shape{}
	for s.peek() != ']' {
		if len(shape) > 0 {
			if err := s.expect(','); err != nil {
				return nil, err
			}
		}
		w := s.word()
		if w == "T" {
			shape = append(shape, T)
			continue
		}
		d, err := strconv.ParseInt(w, 10, 64)
		if err != nil || d < 0 {
			return nil, s.errorf("bad dimension %q", w)
		}
		shape = append(shape, d)
	}
	s.pos++ // ']'
	return shape, nil
}

// attrs reads an optional `{k=v ...}`.
func (s *scanner) attrs() (map[string]any, error) {
	attrs := map[string]any{}
	if s.peek() != '{' {
		return attrs, nil
	}
	s.pos++
	for s.peek() != '}' {
		if s.peek() == 0 {
			return nil, s.errorf("unterminated attributes")
		}
		key := s.word()
		if key == "" {
			return nil, s.errorf("want an attribute name")
		}
		if _, dup := attrs[key]; dup {
			return nil, s.errorf("attribute %s given twice", key)
		}
		if err := s.expect('='); err != nil {
			return nil, err
		}
		v, err := s.value()
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", key, err)
		}
		attrs[key] = v
	}
	s.pos++ // '}'
	return attrs, nil
}

// value reads an attribute value: a quoted string, [ints] or [floats],
// true/false, an int64, or else a float64.
func (s *scanner) value() (any, error) {
	switch s.peek() {
	case '"':
		return s.quoted()
	case '[':
		return s.list()
	}
	w := s.word()
	switch w {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "":
		return nil, s.errorf("want a value")
	}
	if x, err := strconv.ParseInt(w, 10, 64); err == nil {
		return x, nil
	}
	f, err := strconv.ParseFloat(w, 64)
	if err != nil {
		return nil, s.errorf("bad value %q", w)
	}
	return f, nil
}

// quoted reads a Go-quoted string, escapes included.
func (s *scanner) quoted() (string, error) {
	start := s.pos
	s.pos++ // opening quote
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case '\\':
			s.pos += 2
			continue
		case '"':
			s.pos++
			v, err := strconv.Unquote(s.src[start:s.pos])
			if err != nil {
				return "", s.errorf("bad string %s", s.src[start:s.pos])
			}
			return v, nil
		}
		s.pos++
	}
	return "", s.errorf("unterminated string")
}

// list reads [ints] or [floats]: a list whose first element is an integer
// holds integers (FormatAttr writes every float with '.', an exponent or
// Inf/NaN); the empty list is []int64.
func (s *scanner) list() (any, error) {
	s.pos++ // '['
	ints, floats := []int64{}, []float64(nil)
	for n := 0; s.peek() != ']'; n++ {
		if n > 0 {
			if err := s.expect(','); err != nil {
				return nil, err
			}
		}
		w := s.word()
		if x, err := strconv.ParseInt(w, 10, 64); err == nil && floats == nil {
			ints = append(ints, x)
			continue
		}
		f, err := strconv.ParseFloat(w, 64)
		if err != nil || len(ints) > 0 {
			return nil, s.errorf("bad list element %q", w)
		}
		floats = append(floats, f)
	}
	s.pos++ // ']'
	if floats != nil {
		return floats, nil
	}
	return ints, nil
}

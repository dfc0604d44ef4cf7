package server

import "strings"

// stopMatcher finds stop strings in streamed text across token boundaries.
// It holds back the longest tail of the text that could still begin a stop
// string, so no part of a stop string is ever emitted.
type stopMatcher struct {
	stops   []string
	pending string
}

// push adds text and returns what is safe to emit; stopped is true when a
// stop string was found (the text before it is returned, the rest dropped).
func (m *stopMatcher) push(text string) (emit string, stopped bool) {
	m.pending += text
	if len(m.stops) == 0 {
		emit, m.pending = m.pending, ""
		return emit, false
	}
	first := -1
	for _, s := range m.stops {
		if i := strings.Index(m.pending, s); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first >= 0 {
		emit, m.pending = m.pending[:first], ""
		return emit, true
	}
	hold := 0
	for _, s := range m.stops {
		for k := min(len(s)-1, len(m.pending)); k > hold; k-- {
			if strings.HasSuffix(m.pending, s[:k]) {
				hold = k
				break
			}
		}
	}
	emit, m.pending = m.pending[:len(m.pending)-hold], m.pending[len(m.pending)-hold:]
	return emit, false
}

// flush returns the held-back text at the end of generation.
func (m *stopMatcher) flush() string {
	s := m.pending
	m.pending = ""
	return s
}

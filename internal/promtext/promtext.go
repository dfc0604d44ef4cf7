// Package promtext writes Prometheus series in the text exposition format
// by hand: orc's servers export a handful of series and need no client
// library.
package promtext

import (
	"fmt"
	"io"
	"sync"
)

// Histogram is a cumulative Prometheus histogram with fixed bounds, safe
// for concurrent use.
type Histogram struct {
	mu     sync.Mutex
	bounds []float64
	counts []uint64 // per bucket, not cumulative
	sum    float64
	n      uint64
}

// NewHistogram makes a histogram with the given upper bounds, ascending.
func NewHistogram(bounds ...float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]uint64, len(bounds))}
}

// Observe adds one value.
func (h *Histogram) Observe(v float64) {
	h.mu.Lock()
	for i, b := range h.bounds {
		if v <= b {
			h.counts[i]++
			break
		}
	}
	h.sum += v
	h.n++
	h.mu.Unlock()
}

// Write writes the histogram as series name, with HELP and TYPE lines.
func (h *Histogram) Write(w io.Writer, name, help string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	Header(w, name, "histogram", help)
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		fmt.Fprintf(w, "%s_bucket{le=\"%g\"} %d\n", name, b, cum)
	}
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %g\n%s_count %d\n", name, h.n, name, h.sum, name, h.n)
}

// Header writes a series' HELP and TYPE lines.
func Header(w io.Writer, name, typ, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

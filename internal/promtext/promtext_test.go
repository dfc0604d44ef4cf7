package promtext

import (
	"strings"
	"testing"
)

func TestHistogramCumulative(t *testing.T) {
	h := NewHistogram(0.1, 1)
	for _, v := range []float64{0.05, 0.5, 0.7, 3} {
		h.Observe(v)
	}
	var sb strings.Builder
	h.Write(&sb, "x_seconds", "X.")
	want := "# HELP x_seconds X.\n# TYPE x_seconds histogram\n" +
		"x_seconds_bucket{le=\"0.1\"} 1\nx_seconds_bucket{le=\"1\"} 3\nx_seconds_bucket{le=\"+Inf\"} 4\n" +
		"x_seconds_sum 4.25\nx_seconds_count 4\n"
	if sb.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", sb.String(), want)
	}
}

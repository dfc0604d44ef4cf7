package soak

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// Report is a run's result. Times are in milliseconds.
type Report struct {
	URL        string  `json:"url"`
	Requests   int     `json:"requests"` // sent
	Clients    int     `json:"clients"`
	Cancel     int     `json:"cancel"`
	Disconnect int     `json:"disconnect"`
	MaxTokens  int     `json:"max_tokens"`
	Seconds    float64 `json:"seconds"`
	// Outcomes counts how requests ended, by kind then outcome.
	Outcomes map[string]map[string]int `json:"outcomes"`
	// Violations are requests that did not end with exactly one terminal
	// event of an expected kind (the first 20 described).
	Violations     int      `json:"violations"`
	ViolationNotes []string `json:"violation_notes,omitempty"`
	// TTFT is time to first token (request sent → first token event), over
	// the run and per tenth of it in order: a drift between tenths is
	// instability (leaks, fragmentation, queue growth).
	TTFT         Percentiles   `json:"ttft_ms"`
	TTFTByDecile []Percentiles `json:"ttft_ms_by_decile"`
	// InterToken is the gap between consecutive token events of completed
	// requests.
	InterToken Percentiles `json:"inter_token_ms"`
	// CancelToTerminal is POST /cancel answered → terminal event.
	CancelToTerminal Percentiles `json:"cancel_to_terminal_ms"`
	Before           ServerState `json:"before"`
	After            ServerState `json:"after"`
	// ServerOutcomes is the growth of the server's orc_requests_total over
	// the run, by outcome (none after a shutdown).
	ServerOutcomes map[string]int64 `json:"server_outcomes"`
	// Shutdown is what a run with ShutdownAfter saw of the drain.
	Shutdown *ShutdownReport `json:"shutdown,omitempty"`

	mix        int // Options.Requests: the length of the kinds' mix
	ttft       []time.Duration
	ttftDecile [][]time.Duration // [10][requests of that tenth]
	gaps       []time.Duration
	stops      []time.Duration
}

// Percentiles of a sample, in milliseconds.
type Percentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func percentiles(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	// Nearest rank: the smallest value with at least q of the sample at or
	// below it.
	at := func(q float64) float64 {
		i := int(q*float64(len(s))+0.999999) - 1
		return float64(s[min(max(i, 0), len(s)-1)]) / float64(time.Millisecond)
	}
	return Percentiles{N: len(s), P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: at(1)}
}

func newReport(o Options, before ServerState) *Report {
	return &Report{
		URL: o.URL, Clients: o.Clients, Cancel: o.Cancel, Disconnect: o.Disconnect, MaxTokens: o.MaxTokens,
		Outcomes:   map[string]map[string]int{},
		mix:        o.Requests,
		Before:     before,
		ttftDecile: make([][]time.Duration, 10),
	}
}

// add folds in the result of a request sent in tenth dec of the run.
func (r *Report) add(dec int, res result) {
	r.Requests++
	if r.Outcomes[res.kind] == nil {
		r.Outcomes[res.kind] = map[string]int{}
	}
	r.Outcomes[res.kind][res.outcome]++
	if res.problem != "" {
		r.violation(res.problem)
	}
	if res.ttft > 0 {
		r.ttft = append(r.ttft, res.ttft)
		r.ttftDecile[dec] = append(r.ttftDecile[dec], res.ttft)
	}
	r.gaps = append(r.gaps, res.gaps...)
	if res.stop > 0 {
		r.stops = append(r.stops, res.stop)
	}
}

// violation counts one, describing the first 20.
func (r *Report) violation(note string) {
	r.Violations++
	if len(r.ViolationNotes) < 20 {
		r.ViolationNotes = append(r.ViolationNotes, note)
	}
}

// finish computes the statistics once the run and the settling are done.
func (r *Report) finish(after ServerState) {
	r.After = after
	r.TTFT = percentiles(r.ttft)
	r.TTFTByDecile = make([]Percentiles, len(r.ttftDecile))
	for i, d := range r.ttftDecile {
		r.TTFTByDecile[i] = percentiles(d)
	}
	r.InterToken = percentiles(r.gaps)
	r.CancelToTerminal = percentiles(r.stops)
	r.ServerOutcomes = map[string]int64{}
	for o, n := range after.Outcomes {
		if d := n - r.Before.Outcomes[o]; d != 0 {
			r.ServerOutcomes[o] = d
		}
	}
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "soak of %s: %d requests (of every %d, %d cancelled and %d dropped), %d concurrent clients, max_tokens %d, %.1f s (%.0f requests/s)\n",
		r.URL, r.Requests, r.mix, r.Cancel, r.Disconnect, r.Clients, r.MaxTokens, r.Seconds, float64(r.Requests)/r.Seconds)
	for _, k := range slices.Sorted(maps.Keys(r.Outcomes)) {
		fmt.Fprintf(w, "  %-10s", k)
		for _, o := range slices.Sorted(maps.Keys(r.Outcomes[k])) {
			fmt.Fprintf(w, " %s=%d", o, r.Outcomes[k][o])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "violations: %d\n", r.Violations)
	for _, v := range r.ViolationNotes {
		fmt.Fprintf(w, "  %s\n", v)
	}
	fmt.Fprintf(w, "server outcomes over the run:")
	for _, o := range slices.Sorted(maps.Keys(r.ServerOutcomes)) {
		fmt.Fprintf(w, " %s=%d", o, r.ServerOutcomes[o])
	}
	fmt.Fprintln(w)
	p := func(name string, q Percentiles) {
		fmt.Fprintf(w, "%-22s n=%-6d p50 %8.2f ms  p95 %8.2f ms  p99 %8.2f ms  max %8.2f ms\n", name, q.N, q.P50, q.P95, q.P99, q.Max)
	}
	p("time to first token", r.TTFT)
	for i, q := range r.TTFTByDecile {
		p(fmt.Sprintf("  tenth %d", i+1), q)
	}
	p("inter-token", r.InterToken)
	p("cancel → terminal", r.CancelToTerminal)
	if s := r.Shutdown; s != nil {
		fmt.Fprintf(w, "shutdown at %.1f s: /health %d %q; %d admitted streams finished after it; server gone %.2f s after it\n",
			s.AfterSeconds, s.HealthCode, s.HealthStatus, s.StreamsFinished, s.GoneSeconds)
		return
	}
	fmt.Fprintf(w, "vram_bytes_used  %d → %d\n", r.Before.VRAMBytesUsed, r.After.VRAMBytesUsed)
	fmt.Fprintf(w, "goroutines       %d → %d\n", r.Before.Goroutines, r.After.Goroutines)
	fmt.Fprintf(w, "queue depth      %d → %d\n", r.Before.QueueDepth, r.After.QueueDepth)
	if r.Before.KVBlocks != nil {
		fmt.Fprintf(w, "kv blocks used   %d → %d (free %d → %d)\n", r.Before.KVBlocks["used"], r.After.KVBlocks["used"], r.Before.KVBlocks["free"], r.After.KVBlocks["free"])
	}
}

package server

import (
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// refusalLog writes refused requests (queue full, shutting down, invalid,
// unauthorized, no such endpoint) as counted summaries, at most one line per
// interval: a client hammering a full server cannot fill the disk with a
// line per refusal. The first refusal after a quiet interval is written at
// once; orc_requests_total counts every one as it happens.
type refusalLog struct {
	log   *slog.Logger
	every time.Duration

	mu      sync.Mutex
	counts  map[string]int // by error code, since the last line
	first   time.Time      // of the refusals counted
	last    time.Time      // when the last line was written
	pending *time.Timer    // writes the next line; nil when none is due
}

func newRefusalLog(log *slog.Logger, every time.Duration) *refusalLog {
	return &refusalLog{log: log, every: every, counts: map[string]int{}}
}

// note counts one refused request by its error code.
func (l *refusalLog) note(code string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if len(l.counts) == 0 {
		l.first = now
	}
	l.counts[code]++
	if l.pending == nil {
		l.pending = time.AfterFunc(max(0, l.last.Add(l.every).Sub(now)), l.flush)
	}
}

// flush writes the counted refusals as one line.
func (l *refusalLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending != nil {
		l.pending.Stop()
		l.pending = nil
	}
	if len(l.counts) == 0 {
		return
	}
	attrs := []any{"since", l.first.UTC().Format(time.RFC3339Nano)}
	total := 0
	for _, code := range slices.Sorted(maps.Keys(l.counts)) {
		attrs = append(attrs, code, l.counts[code])
		total += l.counts[code]
	}
	l.log.Warn("refused", append([]any{"requests", total}, attrs...)...)
	clear(l.counts)
	l.last = time.Now()
}

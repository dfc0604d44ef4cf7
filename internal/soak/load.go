package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ShutdownReport is what a run with ShutdownAfter saw of the drain.
type ShutdownReport struct {
	// AfterSeconds is when POST /shutdown was answered, into the run.
	AfterSeconds float64 `json:"after_s"`
	// Health is GET /health right after that answer: status code and status.
	HealthCode   int    `json:"health_code"`
	HealthStatus string `json:"health_status"`
	// GoneSeconds is from the answer until the server refused connections;
	// 0 when it still accepted them Settle after the run.
	GoneSeconds float64 `json:"gone_s"`
	// StreamsFinished counts streams admitted before the answer that ended
	// after it, each with exactly one terminal event (else a violation).
	StreamsFinished int `json:"streams_finished"`
}

// load runs o.Clients clients, each sending requests back to back for
// o.Duration (or until the o.Requests of the mix are sent, without one),
// the kinds of plan(o) in turn. A 429 QUEUE_FULL is an expected
// answer when it is retriable and carries Retry-After. With ShutdownAfter,
// POST /shutdown is sent then; from its answer on GET /health must say 503
// draining, no new request may be admitted (503 SHUTTING_DOWN, retriable, or
// the server gone), and every stream admitted before it must still end
// with exactly one terminal event. A client stops once the server is gone.
func (d *driver) load(ctx context.Context, rep *Report) {
	o := d.o
	kinds := plan(o)
	start := time.Now()
	end := start.Add(o.Duration)
	var (
		mu       sync.Mutex // rep
		next     atomic.Int64
		begun    atomic.Int64 // unix ns when POST /shutdown was sent; 0 before
		answered atomic.Int64 // unix ns when it was answered
		wg       sync.WaitGroup
	)
	if o.ShutdownAfter > 0 {
		rep.Shutdown = &ShutdownReport{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(o.ShutdownAfter):
			case <-ctx.Done():
				return
			}
			begun.Store(time.Now().UnixNano())
			problem := d.shutdown(ctx, rep.Shutdown, func() {
				mu.Lock()
				rep.Shutdown.AfterSeconds = time.Since(start).Seconds()
				mu.Unlock()
				answered.Store(time.Now().UnixNano())
			})
			if problem != "" {
				mu.Lock()
				rep.violation(problem)
				mu.Unlock()
			}
		}()
	}
	for range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for (o.Duration == 0 || time.Now().Before(end)) && ctx.Err() == nil {
				i := next.Add(1) - 1
				if o.Duration == 0 && i >= int64(o.Requests) {
					return // the mix once, between the clients
				}
				r := d.one(ctx, fmt.Sprintf("soak-%d-%d", start.UnixNano(), i), kinds[i%int64(len(kinds))], o.Seed+uint64(i)+1)
				gone := judgeUnderLoad(&r, begun.Load(), answered.Load())
				mu.Lock()
				tenth := int(10 * i / int64(o.Requests))
				if o.Duration > 0 {
					tenth = int(10 * r.sent.Sub(start) / o.Duration)
				}
				rep.add(min(9, tenth), r)
				if a := answered.Load(); a != 0 && r.sent.UnixNano() < a && r.ended.UnixNano() > a {
					rep.Shutdown.StreamsFinished++
				}
				if o.Progress != nil {
					o.Progress(rep.Requests)
				}
				mu.Unlock()
				if gone {
					return
				}
			}
		}()
	}
	wg.Wait()
	if rep.Shutdown != nil {
		rep.Shutdown.GoneSeconds = d.gone(ctx, time.Unix(0, answered.Load()))
		if rep.Shutdown.GoneSeconds == 0 {
			rep.violation(fmt.Sprintf("the server still accepted connections %v after the run", o.Settle))
		}
	}
}

// judgeUnderLoad clears the problem of an answer a load expects and marks
// a request admitted after the shutdown was answered; begun and answered
// are the shutdown's times (unix ns, 0 before). It reports whether the
// server is gone.
func judgeUnderLoad(r *result, begun, answered int64) (gone bool) {
	switch {
	case r.refusal != nil && r.refusal.code == "QUEUE_FULL" && r.refusal.status == http.StatusTooManyRequests:
		if !r.refusal.retriable || r.refusal.retryAfter == "" {
			r.problem = fmt.Sprintf("429 QUEUE_FULL with retriable %v, Retry-After %q", r.refusal.retriable, r.refusal.retryAfter)
		} else if n, err := strconv.Atoi(r.refusal.retryAfter); err != nil || n < 1 {
			r.problem = fmt.Sprintf("Retry-After %q is not a whole number of seconds ≥ 1", r.refusal.retryAfter)
		} else {
			r.problem = ""
		}
	case begun == 0:
	case r.refusal != nil && r.refusal.code == "SHUTTING_DOWN" && r.refusal.status == http.StatusServiceUnavailable:
		if r.refusal.retriable {
			r.problem = ""
		} else {
			r.problem = "503 SHUTTING_DOWN not marked retriable"
		}
	case r.outcome == "transport_error" || r.outcome == "cancel_failed":
		r.problem = "" // the server has exited
		return r.outcome == "transport_error"
	case answered != 0 && r.sent.UnixNano() > answered && r.refusal == nil:
		r.problem = fmt.Sprintf("a request sent %v after POST /shutdown was answered was admitted (%s)", time.Duration(r.sent.UnixNano()-answered), r.outcome)
	}
	return false
}

// shutdown posts /shutdown, calls answered once it is answered, and reads
// /health right after into sr; it returns a problem when either answers
// otherwise than a draining server.
func (d *driver) shutdown(ctx context.Context, sr *ShutdownReport, answered func()) string {
	resp, err := d.post(ctx, "/shutdown", nil)
	answered()
	if err != nil {
		return fmt.Sprintf("POST /shutdown: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Sprintf("POST /shutdown: HTTP %d, want 202", resp.StatusCode)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, d.o.URL+"/health", nil)
	resp, err = d.client.Do(req)
	if err != nil {
		return fmt.Sprintf("GET /health right after POST /shutdown: %v", err)
	}
	defer resp.Body.Close()
	var h struct {
		Status string `json:"status"`
	}
	json.NewDecoder(resp.Body).Decode(&h)
	sr.HealthCode, sr.HealthStatus = resp.StatusCode, h.Status
	if resp.StatusCode != http.StatusServiceUnavailable || h.Status != "draining" {
		return fmt.Sprintf("GET /health right after POST /shutdown: %d %q, want 503 draining", resp.StatusCode, h.Status)
	}
	return ""
}

// gone waits up to Settle for the server to refuse connections and returns
// the seconds from since until it did, or 0 when it did not.
func (d *driver) gone(ctx context.Context, since time.Time) float64 {
	u, err := url.Parse(d.o.URL)
	if err != nil {
		return 0
	}
	deadline := time.Now().Add(d.o.Settle)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return time.Since(since).Seconds()
		}
		if c != nil {
			c.Close()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0
}

// Package soak drives a running orc server (orcrun serve) with a long run of
// POST /execute requests, some cancelled mid-stream through POST /cancel,
// some dropped mid-stream by closing the connection, and reports what a
// worker must survive unchanged: outcomes by kind, time to first token per
// tenth of the run (stability), inter-token latency, and the server's VRAM,
// goroutines and queue before and after. Requests are sequential, or with
// Clients and Duration a load of concurrent clients (load.go), optionally
// shut down midway (ShutdownAfter).
package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// Options configure a run.
type Options struct {
	URL        string // server base URL, e.g. http://127.0.0.1:8080
	Requests   int    // sequential /execute requests; under load, the length of the repeated mix
	Cancel     int    // of them, cancelled through POST /cancel after the first token
	Disconnect int    // of them, dropped by closing the connection after the first token
	// Clients and Duration make a load: Clients send requests back to back
	// for Duration (kinds in the mix of Requests, Cancel and Disconnect);
	// 429 QUEUE_FULL answers are expected. Clients above 1 without Duration
	// send the Requests requests of the mix once between them; Clients 0
	// or 1 without Duration is the sequential run.
	Clients  int
	Duration time.Duration
	// ShutdownAfter, under load, posts /shutdown this far into the run and
	// checks the drain (see load.go).
	ShutdownAfter time.Duration
	MaxTokens     int // max_tokens of each request
	Prompt        string
	APIKey        string // sent as a Bearer token when set
	Seed          uint64 // chooses which requests are cancelled or dropped, and each request's sampling seed
	// RequestTimeout bounds one request; past it the request is a violation.
	RequestTimeout time.Duration
	// Settle is how long the server may take after the run to get back to
	// its goroutine baseline (connections closing, jobs finishing).
	Settle time.Duration
	// Progress, when set, is called after each request with how many are
	// done (under load, one call at a time).
	Progress func(done int)
}

// Request kinds.
const (
	kindComplete   = "complete"
	kindCancel     = "cancel"
	kindDisconnect = "disconnect"
)

// Outcomes a request can end with. Those not in expectedOutcome's answer are
// violations.
const (
	outEnd            = "end"              // terminal end event
	outCancelled      = "cancelled"        // terminal error CANCELLED after POST /cancel
	outCancelAfterEnd = "cancel_after_end" // the job finished before the cancel took effect
	outDisconnected   = "disconnected"     // the client dropped the stream after a token
)

func (o *Options) check() error {
	if _, err := url.ParseRequestURI(o.URL); err != nil || o.URL == "" {
		return fmt.Errorf("soak: --url %q is not an http URL", o.URL)
	}
	switch {
	case o.Requests < 1:
		return fmt.Errorf("soak: --requests %d: must be at least 1", o.Requests)
	case o.Cancel < 0 || o.Disconnect < 0:
		return fmt.Errorf("soak: --cancel %d / --disconnect %d: must not be negative", o.Cancel, o.Disconnect)
	case o.Cancel+o.Disconnect > o.Requests:
		return fmt.Errorf("soak: --cancel %d + --disconnect %d exceed --requests %d", o.Cancel, o.Disconnect, o.Requests)
	case o.MaxTokens < 2:
		return fmt.Errorf("soak: --max-tokens %d: must be at least 2, so that a stream can be interrupted after its first token", o.MaxTokens)
	case o.Prompt == "":
		return errors.New("soak: the prompt is empty")
	case o.Clients < 0 || o.Duration < 0 || o.ShutdownAfter < 0:
		return fmt.Errorf("soak: --clients %d, --duration %v, --shutdown-after %v: must not be negative", o.Clients, o.Duration, o.ShutdownAfter)
	case o.ShutdownAfter > 0 && o.ShutdownAfter >= o.Duration:
		return fmt.Errorf("soak: --shutdown-after %v must fall inside --duration %v", o.ShutdownAfter, o.Duration)
	}
	o.Clients = max(o.Clients, 1)
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 60 * time.Second
	}
	if o.Settle <= 0 {
		o.Settle = 10 * time.Second
	}
	return nil
}

// result is what one request did.
type result struct {
	kind    string
	outcome string
	problem string          // a violation, described; empty when none
	ttft    time.Duration   // request sent → first token event; 0 without one
	gaps    []time.Duration // between consecutive token events
	stop    time.Duration   // cancel answered → terminal event (cancel kind)
	refusal *refusal        // the error answer, when not 200
	sent    time.Time
	ended   time.Time // when the terminal event arrived; zero without one
}

// refusal is a request's error answer.
type refusal struct {
	status     int
	code       string
	retriable  bool
	retryAfter string
}

// Run drives the server at o.URL and reports. It fails only when the run
// cannot start (bad options, no server); what goes wrong during the run is
// in the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = o.Clients + 1 // a kept connection per client, and one for /cancel
	d := &driver{o: o, client: &http.Client{Transport: transport}}
	defer d.client.CloseIdleConnections()
	// One request before the baseline, so that what the first request
	// starts once (worker pools, buffers) is not counted as growth.
	if r := d.one(ctx, "soak-warmup", kindComplete, o.Seed); r.problem != "" {
		return nil, fmt.Errorf("soak: warm-up request: %s", r.problem)
	}
	before, err := d.state(ctx)
	if err != nil {
		return nil, err
	}
	rep := newReport(o, before)
	start := time.Now()
	if o.Duration > 0 || o.Clients > 1 {
		d.load(ctx, rep)
	} else {
		for i, k := range plan(o) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r := d.one(ctx, fmt.Sprintf("soak-%d-%d", start.UnixNano(), i), k, o.Seed+uint64(i)+1)
			rep.add(i*10/o.Requests, r)
			if o.Progress != nil {
				o.Progress(i + 1)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.Seconds = time.Since(start).Seconds()
	after := before
	if rep.Shutdown == nil {
		if after, err = d.settle(ctx, before); err != nil {
			return nil, err
		}
	}
	rep.finish(after)
	return rep, nil
}

// plan spreads the cancelled and dropped requests over the run at random
// (from o.Seed), so that every tenth of the run has some of each.
func plan(o Options) []string {
	kinds := make([]string, o.Requests)
	for i := range kinds {
		switch {
		case i < o.Cancel:
			kinds[i] = kindCancel
		case i < o.Cancel+o.Disconnect:
			kinds[i] = kindDisconnect
		default:
			kinds[i] = kindComplete
		}
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x50a4))
	r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	return kinds
}

type driver struct {
	o      Options
	client *http.Client
}

func (d *driver) post(ctx context.Context, path string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.o.URL+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if d.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+d.o.APIKey)
	}
	return d.client.Do(req)
}

// one runs one request of kind k and classifies how it ended.
func (d *driver) one(parent context.Context, id, k string, seed uint64) result {
	ctx, cancel := context.WithTimeout(parent, d.o.RequestTimeout)
	defer cancel()
	sent := time.Now()
	r := result{kind: k, sent: sent}
	resp, err := d.post(ctx, "/execute", map[string]any{
		"job_id": id, "prompt": d.o.Prompt, "max_tokens": d.o.MaxTokens, "temperature": 0.8, "seed": seed,
	})
	if err != nil {
		r.outcome, r.problem = "transport_error", fmt.Sprintf("%s: POST /execute: %v", id, err)
		return r
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		var e struct {
			Code      string `json:"code"`
			Retriable bool   `json:"retriable"`
		}
		json.Unmarshal(b, &e)
		r.refusal = &refusal{status: resp.StatusCode, code: e.Code, retriable: e.Retriable, retryAfter: resp.Header.Get("Retry-After")}
		r.outcome = "http_" + strconv.Itoa(resp.StatusCode)
		if e.Code != "" {
			r.outcome += "_" + e.Code
		}
		r.problem = fmt.Sprintf("%s: HTTP %d: %s", id, resp.StatusCode, bytes.TrimSpace(b))
		return r
	}
	var (
		terminals []Event
		afterEnd  int // events after the first terminal one
		lastToken time.Time
		cancelled time.Time // when POST /cancel was answered
		cancelErr error
		dropped   bool
	)
	rerr := ReadEvents(resp.Body, func(e Event) bool {
		if len(terminals) > 0 {
			afterEnd++
		}
		switch {
		case e.terminal():
			terminals = append(terminals, e)
		case e.Name == "token":
			if r.ttft == 0 {
				r.ttft = e.At.Sub(sent)
			} else if k == kindComplete {
				r.gaps = append(r.gaps, e.At.Sub(lastToken))
			}
			lastToken = e.At
			if k == kindCancel && cancelled.IsZero() {
				cancelErr = d.cancel(ctx, id)
				cancelled = time.Now()
			}
			if k == kindDisconnect {
				dropped = true
				return false // the deferred Close drops the connection mid-stream
			}
		}
		return true
	})
	switch {
	case dropped:
		r.outcome = outDisconnected
		return r
	case ctx.Err() != nil:
		r.outcome, r.problem = "client_timeout", fmt.Sprintf("%s: no terminal event within %v", id, d.o.RequestTimeout)
		return r
	case cancelErr != nil:
		r.outcome, r.problem = "cancel_failed", fmt.Sprintf("%s: POST /cancel: %v", id, cancelErr)
		return r
	case len(terminals) == 0:
		r.outcome, r.problem = "no_terminal", fmt.Sprintf("%s: stream ended without a terminal event (read error %v)", id, rerr)
		return r
	case len(terminals) > 1 || afterEnd > 0:
		r.outcome, r.problem = "extra_events", fmt.Sprintf("%s: %d terminal events, %d events after the first", id, len(terminals), afterEnd)
		return r
	}
	t := terminals[0]
	r.ended = t.At
	if t.Name == "error" {
		r.outcome = "error_" + t.code()
	} else {
		r.outcome = outEnd
	}
	if k == kindCancel && !cancelled.IsZero() {
		r.stop = t.At.Sub(cancelled)
		switch r.outcome {
		case "error_CANCELLED":
			r.outcome = outCancelled
		case outEnd:
			r.outcome = outCancelAfterEnd
		}
	}
	if !slices.Contains(expectedOutcomes(k), r.outcome) {
		r.problem = fmt.Sprintf("%s: a %s request ended with %s %v", id, k, t.Name, t.Data)
	}
	return r
}

// expectedOutcomes are the endings that are no violation for a kind. A
// cancel request whose stream ends before its first token was read is a
// normal end (nothing left to cancel).
func expectedOutcomes(kind string) []string {
	switch kind {
	case kindCancel:
		return []string{outCancelled, outCancelAfterEnd, outEnd}
	case kindDisconnect:
		return []string{outDisconnected, outEnd}
	}
	return []string{outEnd}
}

// cancel posts /cancel for id and checks the 202.
func (d *driver) cancel(ctx context.Context, id string) error {
	resp, err := d.post(ctx, "/cancel", map[string]string{"job_id": id})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("HTTP %d, want 202", resp.StatusCode)
	}
	return nil
}

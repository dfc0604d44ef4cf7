// Package loadgen drives orcd and orcrun workers with concurrent streaming
// clients and measures what a client sees: aggregate tokens/s, time to the
// first token and the gaps between tokens. orcd bench runs it to compare
// orcd in front of a pool with one worker reached directly.
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llama-orch/orc/internal/soak"
)

// Target is an endpoint to drive: orcd's task API, or a worker's /execute.
type Target struct {
	URL    string
	Orcd   bool   // POST /v1/tasks then GET its stream; else POST /execute
	Model  string // orcd: the model to route by
	APIKey string // Bearer token, when the target needs one
}

// Request is what every request asks for.
type Request struct {
	Prompt    string
	MaxTokens int
	Seed      uint64
}

// Result is one run's measurements.
type Result struct {
	Clients      int     `json:"clients"`
	Requests     int     `json:"requests"`
	Failed       int     `json:"failed"`
	Refused      int     `json:"refused_429"` // retried after the advised back-off
	Tokens       int64   `json:"tokens"`
	Seconds      float64 `json:"seconds"`
	TokensPerSec float64 `json:"tokens_per_s"`
	TTFTMedianMs float64 `json:"ttft_median_ms"`
	TTFTP99Ms    float64 `json:"ttft_p99_ms"`
	GapMedianUs  float64 `json:"inter_token_median_us"`
	FirstFailure string  `json:"first_failure,omitempty"`
	ttfts, gaps  []time.Duration
	failureOnce  sync.Once
}

// one is a request's client-side timings.
type one struct {
	ttft   time.Duration
	gaps   []time.Duration
	tokens int
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}

// Run sends n requests from clients concurrent clients and measures them.
func Run(ctx context.Context, tg Target, req Request, clients, n int) *Result {
	res := &Result{Clients: clients, Requests: n}
	var next atomic.Int64
	var mu sync.Mutex
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) || ctx.Err() != nil {
					return
				}
				r := req
				r.Seed = req.Seed + uint64(i)
				o, refused, err := tg.stream(ctx, r, fmt.Sprintf("bench-%d-%d-%d", start.UnixNano(), c, i))
				mu.Lock()
				res.Refused += refused
				res.add(o, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.summarize()
	return res
}

// add books one request.
func (r *Result) add(o one, err error) {
	if err != nil {
		r.Failed++
		r.failureOnce.Do(func() { r.FirstFailure = err.Error() })
		return
	}
	r.Tokens += int64(o.tokens)
	r.ttfts = append(r.ttfts, o.ttft)
	r.gaps = append(r.gaps, o.gaps...)
}

// summarize computes the rates and quantiles.
func (r *Result) summarize() {
	r.TokensPerSec = float64(r.Tokens) / r.Seconds
	r.TTFTMedianMs = ms(quantile(r.ttfts, 0.5))
	r.TTFTP99Ms = ms(quantile(r.ttfts, 0.99))
	r.GapMedianUs = float64(quantile(r.gaps, 0.5).Nanoseconds()) / 1e3
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// quantile of ds (sorted in place); zero when empty.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

// stream runs one request to its terminal event; a 429 waits the advised
// back-off and tries again.
func (tg Target) stream(ctx context.Context, r Request, id string) (one, int, error) {
	refused := 0
	for {
		sent := time.Now()
		body, err := tg.open(ctx, r, id)
		if err == errRefused {
			refused++
			continue
		}
		if err != nil {
			return one{}, refused, err
		}
		o, err := read(body, sent)
		body.Close()
		return o, refused, err
	}
}

var errRefused = fmt.Errorf("refused")

// open starts the request and returns the event stream.
func (tg Target) open(ctx context.Context, r Request, id string) (io.ReadCloser, error) {
	body := map[string]any{"prompt": r.Prompt, "max_tokens": r.MaxTokens, "seed": r.Seed, "temperature": 0.8}
	path := "/execute"
	if tg.Orcd {
		path = "/v1/tasks"
		body["model"] = tg.Model
	} else {
		body["job_id"] = id
	}
	resp, err := tg.do(ctx, "POST", path, body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		wait := time.Second
		if ms, err := strconv.Atoi(resp.Header.Get("X-Backoff-Ms")); err == nil {
			wait = time.Duration(ms) * time.Millisecond
		} else if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			wait = time.Duration(s) * time.Second
		}
		resp.Body.Close()
		time.Sleep(wait)
		return nil, errRefused
	}
	if !tg.Orcd {
		if resp.StatusCode != http.StatusOK {
			defer resp.Body.Close()
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			return nil, fmt.Errorf("%s: %s %s", path, resp.Status, msg)
		}
		return resp.Body, nil
	}
	var acc struct {
		Stream  string `json:"stream"`
		Message string `json:"message"`
	}
	json.NewDecoder(resp.Body).Decode(&acc)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return nil, fmt.Errorf("%s: %s %s", path, resp.Status, acc.Message)
	}
	sresp, err := tg.do(ctx, "GET", acc.Stream, nil)
	if err != nil {
		return nil, err
	}
	if sresp.StatusCode != http.StatusOK {
		sresp.Body.Close()
		return nil, fmt.Errorf("%s: %s", acc.Stream, sresp.Status)
	}
	return sresp.Body, nil
}

func (tg Target) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, tg.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if tg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+tg.APIKey)
	}
	return client.Do(req)
}

// read follows a stream to its terminal event, timing its tokens.
func read(body io.Reader, sent time.Time) (one, error) {
	var o one
	var last time.Time
	var end *soak.Event
	err := soak.ReadEvents(body, func(e soak.Event) bool {
		switch e.Name {
		case "token":
			if o.tokens == 0 {
				o.ttft = e.At.Sub(sent)
			} else {
				o.gaps = append(o.gaps, e.At.Sub(last))
			}
			last = e.At
			o.tokens++
		case "end", "error":
			end = &e
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return o, err
	case end == nil:
		return o, fmt.Errorf("stream ended without end or error")
	case end.Name == "error":
		return o, fmt.Errorf("error event %v", end.Data)
	}
	return o, nil
}

// Latency alternates single requests to a and b, runs times each, so that
// drift in the machine touches both alike; it returns a's and b's results.
func Latency(ctx context.Context, a, b Target, req Request, runs int) (*Result, *Result) {
	ra, rb := &Result{Clients: 1}, &Result{Clients: 1}
	for i := range runs {
		for _, x := range []struct {
			tg  Target
			res *Result
		}{{a, ra}, {b, rb}} {
			r := req
			r.Seed = req.Seed + uint64(i)
			t0 := time.Now()
			o, _, err := x.tg.stream(ctx, r, fmt.Sprintf("lat-%d-%d", t0.UnixNano(), i))
			x.res.Requests++
			x.res.Seconds += time.Since(t0).Seconds()
			x.res.add(o, err)
		}
	}
	ra.summarize()
	rb.summarize()
	return ra, rb
}

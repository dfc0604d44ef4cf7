package orchestrator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"
)

// executeRequest is the worker API's POST /execute body.
type executeRequest struct {
	JobID     string `json:"job_id"`
	Prompt    string `json:"prompt"`
	MaxTokens int    `json:"max_tokens"`
	Sampling
}

// metricsEvery is how many tokens pass between metrics frames.
const metricsEvery = 64

// relay runs one placement of t on w: it posts the job, then copies the
// worker's stream into the task's transcript. It returns true when the
// worker failed before starting the task, which may then be placed again;
// every other way out ends the task's stream.
func (o *Orchestrator) relay(t *task, w *worker) (retry bool) {
	body, _ := json.Marshal(executeRequest{
		JobID: t.id + "." + itoa(t.placementsSeen()), Prompt: t.req.Prompt, MaxTokens: t.maxTokens, Sampling: t.req.Sampling,
	})
	resp, ctx, stop, retry := o.post(t, w, "/execute", body)
	if resp == nil {
		return retry
	}
	defer stop()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return o.refusedByWorker(t, w, resp)
	}
	return o.relayStream(ctx, t, w, bufio.NewReaderSize(resp.Body, 16<<10))
}

// relayStream copies the worker's events from rd into t's transcript until
// the terminal one; retry as relay's.
func (o *Orchestrator) relayStream(ctx context.Context, t *task, w *worker, rd *bufio.Reader) (retry bool) {
	var event []byte
	started := false
	for {
		line, err := rd.ReadSlice('\n')
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			o.markSuspect(w)
			if !started {
				return true
			}
			o.fail(t, newError(http.StatusBadGateway, CodeWorkerReset, "worker "+w.ID+" dropped the stream: "+errText(err)).retriableAfter(0).onPool(Engine, w.pool.id))
			return false
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			event = append(event[:0], line[len("event: "):]...)
		case bytes.HasPrefix(line, []byte("data: ")):
			data := line[len("data: "):]
			switch string(event) {
			case "token":
				o.relayToken(t, w, data)
			case "started":
				started = true
				o.relayStarted(t, w, data)
			case "end":
				o.relayEnd(t, w, data)
				return false
			case "error":
				return o.relayError(t, w, data, started)
			}
		}
	}
}

func errText(err error) string {
	if errors.Is(err, io.EOF) {
		return "connection closed"
	}
	return err.Error()
}

// placementsSeen is the placement count, for a job id unique per
// placement (a restarted worker may still hold the previous one).
func (t *task) placementsSeen() int { return t.placements }

// relayToken appends the worker's token data as it is; every metricsEvery
// tokens a metrics frame follows. No heap allocation per token.
func (o *Orchestrator) relayToken(t *task, w *worker, data []byte) {
	now := time.Now()
	n, ok := t.appendToken(data)
	if !ok {
		return
	}
	t.mu.Lock()
	prev := t.lastToken
	t.lastToken = now
	t.mu.Unlock()
	if n == 1 {
		o.metrics.ttft.Observe(now.Sub(t.admitted).Seconds())
	} else {
		o.metrics.interToken.Observe(now.Sub(prev).Seconds())
	}
	if n%metricsEvery == 0 {
		o.appendMetrics(t, w, n)
	}
}

type workerStarted struct {
	Seed *uint64 `json:"seed"`
}

func (o *Orchestrator) relayStarted(t *task, w *worker, data []byte) {
	var s workerStarted
	json.Unmarshal(data, &s)
	now := time.Now()
	t.mu.Lock()
	t.started, t.seed = now, s.Seed
	t.mu.Unlock()
	wait := now.Sub(t.admitted)
	o.metrics.queueWait.Observe(wait.Seconds())
	o.mu.Lock()
	o.onTime.add(wait <= time.Duration(t.predicted)*time.Millisecond+onTimeSlack)
	o.mu.Unlock()
	o.appendMetrics(t, w, 0)
}

// appendMetrics adds a metrics frame: the queue, the placement and, for a
// session with budgets, what is left of them.
func (o *Orchestrator) appendMetrics(t *task, w *worker, tokens int) {
	o.mu.Lock()
	f := metricsFrame{QueueDepth: len(o.queue), PoolID: w.pool.id, WorkerID: w.ID, TokensOut: tokens, OnTimeProbability: o.onTime.probability()}
	if t.session != nil {
		f.Budget = t.session.budget(o.cfg)
	}
	o.mu.Unlock()
	t.appendFrame(evMetrics, f)
}

type workerEnd struct {
	TokensOut    int    `json:"tokens_out"`
	DecodeTimeMs int64  `json:"decode_time_ms"`
	StopReason   string `json:"stop_reason"`
}

func (o *Orchestrator) relayEnd(t *task, w *worker, data []byte) {
	var e workerEnd
	json.Unmarshal(data, &e)
	t.mu.Lock()
	t.decodeMs = e.DecodeTimeMs
	took := time.Since(t.started)
	t.mu.Unlock()
	o.mu.Lock()
	st := &w.pool.stats
	st.tasksDone++
	st.tokensOut += int64(e.TokensOut)
	if st.meanJob == 0 {
		st.meanJob = took
	} else {
		st.meanJob = (st.meanJob*7 + took) / 8
	}
	o.mu.Unlock()
	if t.finish(evEnd, endFrame{TokensOut: e.TokensOut, DecodeTimeMs: e.DecodeTimeMs, DecodeMs: e.DecodeTimeMs, StopReason: e.StopReason}, evEnd) {
		o.finished(t)
	}
}

type workerError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retriable bool   `json:"retriable"`
}

// relayError maps the worker's error event onto orcd's codes. A worker
// shutting down before it started the task gives it back for placement.
func (o *Orchestrator) relayError(t *task, w *worker, data []byte, started bool) (retry bool) {
	var we workerError
	json.Unmarshal(data, &we)
	pool := w.pool.id
	var e *apiError
	switch we.Code {
	case "SHUTTING_DOWN":
		if !started {
			o.markSuspect(w)
			return true
		}
		e = newError(http.StatusBadGateway, CodeWorkerReset, "worker "+w.ID+" shut down during the task").retriableAfter(0)
	case "INFERENCE_TIMEOUT":
		e = newError(http.StatusGatewayTimeout, CodeDecodeTimeout, we.Message).retriableAfter(0)
	case "INVALID_REQUEST":
		e = invalidParams(we.Message)
	case "CANCELLED":
		e = newError(http.StatusOK, CodeCancelled, "cancelled on the worker: "+we.Message)
	default:
		e = newError(http.StatusInternalServerError, CodeInternal, "worker error "+we.Code+": "+we.Message)
		e.Retriable = we.Retriable
	}
	o.fail(t, e.onPool(Engine, pool))
	return false
}

// refusedByWorker handles a worker's refusal of POST /execute: a full or
// draining worker gives the task back for placement, a bad request ends it.
func (o *Orchestrator) refusedByWorker(t *task, w *worker, resp *http.Response) (retry bool) {
	var we workerError
	json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&we)
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusServiceUnavailable:
		o.markSuspect(w)
		return true
	case http.StatusBadRequest:
		o.fail(t, invalidParams(we.Message).onPool(Engine, w.pool.id))
	default:
		o.fail(t, newError(http.StatusBadGateway, CodeInternal, "worker "+w.ID+" answered "+resp.Status+": "+we.Message).onPool(Engine, w.pool.id))
	}
	return false
}

// fail ends the task's stream with e (OC-CTRL-2028) and records it.
func (o *Orchestrator) fail(t *task, e *apiError) {
	if t.finish(evError, e, e.Code) {
		o.finished(t)
	}
}

// post sends a placed task's request to its worker, making the task's
// stopRelay end it. A nil response means the task is over (done or
// aborted) or, with retry, that the worker could not be reached. Otherwise
// the caller closes the body and calls stop.
func (o *Orchestrator) post(t *task, w *worker, path string, body []byte) (resp *http.Response, ctx context.Context, stop func(), retry bool) {
	ctx, cancel := context.WithCancel(o.ctx)
	stop = func() {
		cancel()
		t.mu.Lock()
		t.stopRelay = nil
		t.mu.Unlock()
	}
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		cancel()
		return nil, nil, nil, false
	}
	t.worker, t.stopRelay = w, cancel
	t.mu.Unlock()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.URI+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+o.cfg.PoolToken)
	req.Header.Set("X-Correlation-Id", t.corr)
	resp, err := o.client.Do(req)
	if err != nil {
		aborted := ctx.Err() != nil
		stop()
		if !aborted {
			o.markSuspect(w)
		}
		return nil, nil, nil, !aborted
	}
	return resp, ctx, stop, false
}

package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llama-orch/orc/internal/httpjson"
	"github.com/llama-orch/orc/internal/netsafe"
)

// The OpenAI-compatible front: /v1/chat/completions and /v1/completions
// are admitted, queued and placed like tasks, routed by "model" to the
// pools serving it, and then proxied to the chosen worker's own OpenAI
// endpoint, which applies the model's chat template. /v1/models lists the
// models of registered pools.

// openAIJob is what a proxied request records beyond a task's fields.
type openAIJob struct {
	Path   string `json:"path"`
	Stream bool   `json:"stream"`
	Status int    `json:"status"`
	Chunks int    `json:"chunks"` // streamed data chunks relayed
}

type openAIHead struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	MaxTokens     *int   `json:"max_tokens"`
	MaxCompletion *int   `json:"max_completion_tokens"`
}

// writeOpenAIError answers in OpenAI's error shape, with the back-pressure
// headers of a 429.
func writeOpenAIError(w http.ResponseWriter, e *apiError) {
	if e.RetryAfterMs > 0 {
		w.Header().Set("Retry-After", itoa(int((e.RetryAfterMs+999)/1000)))
		w.Header().Set("X-Backoff-Ms", itoa(int(e.RetryAfterMs)))
	}
	typ := "server_error"
	switch e.status {
	case http.StatusBadRequest, http.StatusNotFound:
		typ = "invalid_request_error"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	}
	status := e.status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	httpjson.Write(w, status, map[string]any{"error": map[string]any{"message": e.Message, "type": typ, "param": nil, "code": strings.ToLower(e.Code)}})
}

func (o *Orchestrator) handleModels(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	o.mu.Lock()
	byModel := map[string][]string{}
	for _, p := range o.sortedPoolsLocked() {
		if p.ready(now, o.cfg.PoolTimeout) {
			byModel[p.reg.Model] = append(byModel[p.reg.Model], p.id)
		}
	}
	models := o.modelsLocked()
	o.mu.Unlock()
	data := []map[string]any{}
	for _, m := range models {
		if pools := byModel[m]; len(pools) > 0 {
			data = append(data, map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "orc", "pools": pools})
		}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (o *Orchestrator) handleOpenAI(w http.ResponseWriter, r *http.Request) {
	body, e := readBody(w, r)
	if e != nil {
		writeOpenAIError(w, e)
		return
	}
	var head openAIHead
	if err := json.Unmarshal(body, &head); err != nil {
		writeOpenAIError(w, invalidParams("body: invalid JSON: "+err.Error()))
		return
	}
	req := TaskRequest{Model: head.Model, MaxTokens: head.MaxTokens}
	if head.MaxCompletion != nil {
		req.MaxTokens = head.MaxCompletion
	}
	if req.MaxTokens == nil && strings.HasSuffix(r.URL.Path, "/v1/completions") {
		sixteen := 16 // OpenAI's default for completions
		req.MaxTokens = &sixteen
	}
	if req.MaxTokens != nil && *req.MaxTokens < 1 {
		writeOpenAIError(w, invalidParams("max_tokens: must be at least 1"))
		return
	}
	t := newTask(netsafe.UUID(), correlationID(r), req)
	t.openai = &openAIJob{Path: r.URL.Path, Stream: head.Stream}
	dropped, e := o.admit(t)
	if e != nil {
		o.metrics.refused(e)
		writeOpenAIError(w, e)
		return
	}
	if dropped != nil {
		o.dropped(dropped)
	}
	o.log.Info("admitted", "task_id", t.id, "model", t.model, "api", r.URL.Path, "queue_position", t.position,
		"predicted_start_ms", t.predicted, "correlation_id", t.corr)
	// A client that leaves while its request waits or runs cancels it.
	stop := context.AfterFunc(r.Context(), func() {
		o.abort(t, newError(http.StatusOK, CodeCancelled, "client disconnected"))
	})
	defer stop()
	answered := false
	o.runPlacements(t, func(wk *worker) bool {
		retry := o.proxyOpenAI(t, wk, body, w, r)
		answered = !retry
		return retry
	})
	if !answered {
		t.mu.Lock()
		e := lastFrameData(string(t.buf))
		t.mu.Unlock()
		var ae apiError
		json.Unmarshal(e, &ae)
		ae.status = http.StatusServiceUnavailable
		writeOpenAIError(w, &ae)
	}
}

// proxyOpenAI sends the request to the worker and copies its answer back,
// flushing each read. Retry when the worker failed before answering.
func (o *Orchestrator) proxyOpenAI(t *task, wk *worker, body []byte, w http.ResponseWriter, r *http.Request) (retry bool) {
	resp, ctx, stop, retry := o.post(t, wk, r.URL.Path, body)
	if resp == nil {
		return retry
	}
	defer stop()
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusServiceUnavailable:
		o.markSuspect(wk)
		return true
	}
	o.metrics.queueWait.Observe(time.Since(t.admitted).Seconds())
	for _, h := range []string{"Content-Type", "Cache-Control"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	chunks := 0
	outcome := evEnd
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			chunks += bytes.Count(buf[:n], []byte("data: "))
			if _, werr := w.Write(buf[:n]); werr != nil {
				outcome = CodeCancelled
				break
			}
			rc.Flush()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			outcome = CodeCancelled
			if ctx.Err() == nil {
				outcome = CodeWorkerReset
				o.markSuspect(wk)
				if t.openai.Stream {
					io.WriteString(w, `data: {"error":{"message":"worker `+wk.ID+` dropped the stream","type":"server_error","param":null,"code":"worker_reset"}}`+"\n\n")
					rc.Flush()
				}
			}
			break
		}
	}
	if resp.StatusCode != http.StatusOK && outcome == evEnd {
		outcome = CodeInternal
	}
	t.mu.Lock()
	t.openai.Status, t.openai.Chunks = resp.StatusCode, chunks
	t.mu.Unlock()
	if t.finish(evEnd, map[string]any{"status": resp.StatusCode}, outcome) {
		o.finished(t)
	}
	return false
}

package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/tokenizer"
)

// readBody reads a request body up to the configured limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, invalid("body", "larger than %d bytes", s.cfg.MaxBodyBytes)
	}
	if err != nil {
		return nil, invalid("body", "unreadable: %v", err)
	}
	return b, nil
}

// newJob validates a request, tokenizes its prompt and returns a job ready
// to submit.
func (s *Server) newJob(req *ExecuteRequest) (*activeJob, error) {
	sampling, maxTokens, err := req.validate(s.info.Vocab, s.cfg.MaxTokensOut)
	if err != nil {
		return nil, err
	}
	if err := validateStop(req.Stop, func(x string) int { return len(s.tok.Encode(x, false)) }); err != nil {
		return nil, err
	}
	ids := tokenizer.EncodePrompt(s.tok, req.Prompt)
	var limit *runtime.LimitError
	if err := runtime.CheckPrompt(len(ids), s.info.ContextLength); errors.As(err, &limit) {
		return nil, invalid(limit.Field, "%s", limit.Message)
	}
	j := &activeJob{
		job:      job{id: req.JobID, prompt: ids, maxTokens: min(maxTokens, s.info.ContextLength-len(ids)), sampling: sampling, stop: req.Stop},
		events:   make(chan event, 64),
		gone:     make(chan struct{}),
		enqueued: time.Now(),
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, s.cfg.InferenceTimeout, errTimeout)
	j.ctx = ctx
	j.cancel = func(cause error) { cancel(cause); cancelTimeout() }
	s.log.Info("request", "job_id", j.id, "prompt_chars", len(req.Prompt), "prompt_sha256", promptHash(req.Prompt), "prompt_tokens", len(ids))
	return j, nil
}

// promptHash identifies a prompt in logs without revealing it.
func promptHash(p string) string {
	h := sha256.Sum256([]byte(p))
	return hex.EncodeToString(h[:8])
}

// errorWriter writes an HTTP error in one API's shape.
type errorWriter func(w http.ResponseWriter, status int, code, msg string)

// submit queues j or writes the HTTP refusal with writeErr; false when
// refused.
func (s *Server) submit(w http.ResponseWriter, j *activeJob, writeErr errorWriter) bool {
	err := s.sched.submit(j)
	if err == nil {
		return true
	}
	j.cancel(err)
	switch {
	case errors.Is(err, errQueueFull):
		s.metrics.request(outcomeRejected)
		w.Header().Set("Retry-After", strconv.Itoa(s.sched.retryAfter()))
		writeErr(w, http.StatusTooManyRequests, codeQueueFull, fmt.Sprintf("%d jobs already wait; retry later", s.cfg.QueueSize))
	case errors.Is(err, errShutdown):
		s.metrics.request(outcomeRejected)
		writeErr(w, http.StatusServiceUnavailable, codeShuttingDown, "server is shutting down")
	default:
		s.metrics.request(outcomeInvalid)
		writeErr(w, http.StatusConflict, codeDuplicateJob, "job_id "+j.id+": "+err.Error())
	}
	return false
}

// writeRequestError answers a validation failure with 400.
func (s *Server) writeRequestError(w http.ResponseWriter, err error) {
	s.metrics.request(outcomeInvalid)
	var re *requestError
	if errors.As(err, &re) {
		writeJSONError(w, http.StatusBadRequest, codeInvalidRequest, re.Error())
		return
	}
	writeJSONError(w, http.StatusBadRequest, codeInvalidRequest, err.Error())
}

func (s *Server) handleExecute(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeRequestError(w, err)
		return
	}
	var req ExecuteRequest
	if err := decodeStrict(body, &req); err != nil {
		s.writeRequestError(w, err)
		return
	}
	j, err := s.newJob(&req)
	if err != nil {
		s.writeRequestError(w, err)
		return
	}
	if !s.submit(w, j, writeJSONError) {
		return
	}
	sse, err := newSSE(w)
	if err != nil {
		j.markCancelled(errDisconnected)
		return
	}
	s.stream(r.Context(), j, sendWithin(w, s.cfg.Limits.StreamWriteTimeout, sse.send))
}

// stream delivers a job's events to send until the terminal one. A client
// that goes away, or a send that fails, cancels the job.
func (s *Server) stream(client context.Context, j *activeJob, send func(event) error) {
	defer j.consumerGone()
	for {
		select {
		case <-client.Done():
			j.markCancelled(errDisconnected)
			return
		case e := <-j.events:
			if !s.deliver(j, e, send) {
				j.markCancelled(errDisconnected)
				return
			}
			if e.terminal() {
				return
			}
		}
	}
}

// deliver sends one event; tokens are dropped once the job was cancelled.
func (s *Server) deliver(j *activeJob, e event, send func(event) error) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if e.Name != evToken {
		return send(e) == nil
	}
	if j.cancelled {
		return true
	}
	if send(e) != nil {
		return false
	}
	j.delivered++
	return true
}

type cancelRequest struct {
	JobID string `json:"job_id"`
}

// handleCancel is idempotent: 202 whether the job is running, queued,
// already finished or unknown; the body says which, and for a live job how
// many token events its client was sent: exactly those, and no later
// token, reach the client.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeRequestError(w, err)
		return
	}
	var req cancelRequest
	if err := decodeStrict(body, &req); err != nil {
		s.writeRequestError(w, err)
		return
	}
	if req.JobID == "" {
		s.writeRequestError(w, invalid("job_id", "must be a non-empty string"))
		return
	}
	resp := map[string]any{"job_id": req.JobID, "status": "not_found"}
	if j := s.sched.lookup(req.JobID); j != nil {
		resp["status"] = "cancelled"
		resp["tokens_delivered"] = j.markCancelled(errCancelled)
	}
	writeJSON(w, http.StatusAccepted, resp)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	status := "healthy"
	if !s.healthy.Load() {
		status = "unhealthy"
	}
	i := s.info
	body := map[string]any{
		"status":               status,
		"worker_id":            s.cfg.WorkerID,
		"model":                i.Model,
		"arch":                 i.Arch,
		"device":               i.Device,
		"resident":             i.Resident && s.healthy.Load(),
		"quant_kind":           i.QuantKind,
		"vram_bytes_used":      i.VRAMBytesUsed,
		"tokenizer_kind":       s.tok.Info().Kind,
		"vocab_size":           i.Vocab,
		"context_length":       i.ContextLength,
		"uptime_seconds":       int64(time.Since(s.started).Seconds()),
		"sm":                   i.SM,
		"cuda_runtime_version": i.CUDAVersion,
		"queue_depth":          s.sched.depth(),
	}
	if msg, _ := s.healthMsg.Load().(string); msg != "" {
		body["error"] = msg
	}
	code := http.StatusOK
	if status != "healthy" {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, body)
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	s.metrics.write(w)
}

func (s *Server) handleShutdown(w http.ResponseWriter, r *http.Request) {
	s.log.Info("shutdown", "source", "http", "correlation_id", correlationID(r))
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "shutting_down"})
	s.RequestShutdown()
}

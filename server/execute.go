package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/llama-orch/orc/internal/httpjson"
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
// to submit. chat, when not nil, is the rendered conversation the prompt
// came from: its messages' content is encoded as text (no control tokens),
// and errors about the prompt name messages.
func (s *Server) newJob(r *http.Request, req *ExecuteRequest, chat *tokenizer.ChatPrompt) (*activeJob, error) {
	sampling, maxTokens, err := req.validate(s.info.Vocab, s.cfg.MaxTokensOut)
	if err != nil {
		return nil, blameMessages(err, chat)
	}
	if err := validateStop(req.Stop, func(x string) int { return len(s.tok.Encode(x, false)) }); err != nil {
		return nil, err
	}
	var ids []int32
	if chat != nil {
		ids = tokenizer.EncodeChatPrompt(s.tok, *chat)
	} else {
		ids = tokenizer.EncodePrompt(s.tok, req.Prompt)
	}
	var limit *runtime.LimitError
	if err := runtime.CheckPrompt(len(ids), s.info.ContextLength); errors.As(err, &limit) {
		return nil, blameMessages(invalid(limit.Field, "%s", limit.Message), chat)
	}
	j := &activeJob{
		job:         job{id: req.JobID, prompt: ids, maxTokens: min(maxTokens, s.info.ContextLength-len(ids)), sampling: sampling, stop: req.Stop},
		events:      make(chan event, 64),
		gone:        make(chan struct{}),
		enqueued:    time.Now(),
		correlation: correlationID(r),
		promptChars: utf8.RuneCountInString(req.Prompt),
		promptHash:  promptHash(req.Prompt),
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, s.cfg.InferenceTimeout, errTimeout)
	j.ctx = ctx
	j.cancel = func(cause error) { cancel(cause); cancelTimeout() }
	return j, nil
}

// blameMessages makes an error about a chat request's rendered prompt name
// the field the client sent, messages.
func blameMessages(err error, chat *tokenizer.ChatPrompt) error {
	var re *requestError
	if chat == nil || !errors.As(err, &re) || re.Field != "prompt" {
		return err
	}
	return invalid("messages", "the rendered conversation %s", re.Message)
}

// promptKey keys the prompt hashes of this process's logs: a random key, so
// that a logged hash cannot be matched against hashes of guessed prompts,
// while one prompt's requests still share a hash within the process.
var promptKey = func() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}()

// promptHash identifies a prompt in logs without revealing it: the first 8
// bytes of its HMAC-SHA256 under promptKey.
func promptHash(p string) string {
	m := hmac.New(sha256.New, promptKey)
	m.Write([]byte(p))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// errorWriter writes an HTTP error in one API's shape.
type errorWriter func(w http.ResponseWriter, status int, code, msg string)

// submit queues j or writes the HTTP refusal with writeErr; false when
// refused. An admitted job gets its request log line; refusals are counted
// into the refusal summaries instead.
func (s *Server) submit(w http.ResponseWriter, j *activeJob, writeErr errorWriter) bool {
	err := s.checkFits(j)
	if err == nil {
		err = s.sched.submit(j)
	}
	if err == nil {
		s.log.Info("request", "job_id", j.id, "correlation_id", j.correlation, "prompt_chars", j.promptChars,
			"prompt_hmac", j.promptHash, "prompt_tokens", len(j.prompt), "max_tokens", j.maxTokens)
		return true
	}
	j.cancel(err)
	switch {
	case errors.Is(err, errQueueFull):
		s.metrics.request(outcomeRejected)
		s.refusals.note(codeQueueFull)
		w.Header().Set("Retry-After", strconv.Itoa(s.sched.retryAfter()))
		writeErr(w, http.StatusTooManyRequests, codeQueueFull, fmt.Sprintf("%d jobs already wait; retry later", s.cfg.QueueSize))
	case errors.Is(err, errKVTooSmall):
		// Retriable: another worker's pool may hold it.
		s.metrics.request(outcomeRejected)
		s.refusals.note(codeKVCacheFull)
		w.Header().Set("Retry-After", strconv.Itoa(s.sched.retryAfter()))
		writeErr(w, http.StatusServiceUnavailable, codeKVCacheFull, err.Error())
	case errors.Is(err, errShutdown):
		s.metrics.request(outcomeRejected)
		s.refusals.note(codeShuttingDown)
		writeErr(w, http.StatusServiceUnavailable, codeShuttingDown, "server is shutting down")
	default:
		s.metrics.request(outcomeInvalid)
		s.refusals.note(codeDuplicateJob)
		writeErr(w, http.StatusConflict, codeDuplicateJob, "job_id "+j.id+": "+err.Error())
	}
	return false
}

// writeRequestError answers a validation failure with 400.
func (s *Server) writeRequestError(w http.ResponseWriter, err error) {
	s.metrics.request(outcomeInvalid)
	s.refusals.note(codeInvalidRequest)
	writeJSONError(w, http.StatusBadRequest, codeInvalidRequest, err.Error())
}

func (s *Server) handleExecute(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeRequestError(w, err)
		return
	}
	var req ExecuteRequest
	if err := decodeJSON(body, &req, false); err != nil {
		s.writeRequestError(w, err)
		return
	}
	j, err := s.newJob(r, &req, nil)
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
	if err := decodeJSON(body, &req, false); err != nil {
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
	httpjson.Write(w, http.StatusAccepted, resp)
}

// Worker status values of GET /health.
const (
	statusReady    = "ready"    // accepting work, none running
	statusBusy     = "busy"     // a job runs; new ones queue
	statusDraining = "draining" // shutting down: no new work
	statusFailed   = "failed"   // a residency check failed
)

// status is what GET /health reports.
func (s *Server) status() string {
	draining, busy := s.sched.state()
	switch {
	case !s.healthy.Load():
		return statusFailed
	case draining:
		return statusDraining
	case busy:
		return statusBusy
	}
	return statusReady
}

// handleHealth answers 200 while the worker accepts work (ready or busy)
// and 503 otherwise (draining or failed), so that load balancers and the
// pool manager stop sending.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	status := s.status()
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
		"slots":                s.sched.slots,
		"slots_in_use":         s.sched.inUse(),
	}
	if msg, _ := s.healthMsg.Load().(string); msg != "" {
		body["error"] = msg
	}
	code := http.StatusOK
	if status != statusReady && status != statusBusy {
		code = http.StatusServiceUnavailable
	}
	httpjson.Write(w, code, body)
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	s.metrics.write(w)
}

func (s *Server) handleShutdown(w http.ResponseWriter, r *http.Request) {
	s.log.Info("shutdown", "source", "http", "correlation_id", correlationID(r))
	httpjson.Write(w, http.StatusAccepted, map[string]string{"status": "shutting_down"})
	s.RequestShutdown()
}

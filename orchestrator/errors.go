package orchestrator

import (
	"net/http"
	"strconv"

	"github.com/llama-orch/orc/internal/httpjson"
)

// Error codes of HTTP error bodies and of the stream's error event.
const (
	CodeAdmissionReject  = "ADMISSION_REJECT"    // queue full, or a session budget spent
	CodeQueueFullDropLRU = "QUEUE_FULL_DROP_LRU" // dropped from a full queue for a newer task (policy drop-lru)
	CodeInvalidParams    = "INVALID_PARAMS"      // a field out of range, unknown model or pool, pinning disabled
	CodePoolUnready      = "POOL_UNREADY"        // the pinned pool is draining or has no ready worker
	CodePoolUnavailable  = "POOL_UNAVAILABLE"    // no pool of the model can take the task (gone, drained past its deadline)
	CodeReplicaExhausted = "REPLICA_EXHAUSTED"   // every placement failed before the worker started the task
	CodeDecodeTimeout    = "DECODE_TIMEOUT"      // the task ran past its time limit
	CodeWorkerReset      = "WORKER_RESET"        // the worker died or dropped the stream after it started
	CodeInternal         = "INTERNAL"
	CodeCancelled        = "CANCELLED" // ended by POST /v1/tasks/{id}/cancel
	CodeUnauthorized     = "UNAUTHORIZED"
	CodeNotFound         = "NOT_FOUND"
)

// apiError is the error envelope of every failed request and of the
// stream's error event.
type apiError struct {
	Code         string `json:"code"`
	Message      string `json:"message"`
	Retriable    bool   `json:"retriable"`
	RetryAfterMs int64  `json:"retry_after_ms,omitempty"`
	Engine       string `json:"engine,omitempty"`
	PoolID       string `json:"pool_id,omitempty"`
	PolicyLabel  string `json:"policy_label,omitempty"` // the back-pressure policy that refused (429)
	status       int
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func newError(status int, code, msg string) *apiError {
	return &apiError{status: status, Code: code, Message: msg}
}

func invalidParams(msg string) *apiError {
	return newError(http.StatusBadRequest, CodeInvalidParams, msg)
}

// retriableAfter marks e retriable after ms milliseconds (0: no advice).
func (e *apiError) retriableAfter(ms int64) *apiError {
	e.Retriable = true
	e.RetryAfterMs = ms
	return e
}

func (e *apiError) onPool(engine, pool string) *apiError {
	e.Engine, e.PoolID = engine, pool
	return e
}

// writeError answers with e's status and body; back-pressure refusals carry
// Retry-After (whole seconds, rounded up) and X-Backoff-Ms.
func writeError(w http.ResponseWriter, e *apiError) {
	if e.RetryAfterMs > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt((e.RetryAfterMs+999)/1000, 10))
		w.Header().Set("X-Backoff-Ms", strconv.FormatInt(e.RetryAfterMs, 10))
	}
	status := e.status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	httpjson.Write(w, status, e)
}

package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/llama-orch/orc/internal/httpjson"
)

// Event names of the worker API's stream (SSE and websocket alike).
const (
	evStarted = "started"
	evToken   = "token"
	evEnd     = "end"
	evError   = "error"
)

// Error codes of the error event and of HTTP error bodies.
const (
	codeInvalidRequest   = "INVALID_REQUEST"
	codeCancelled        = "CANCELLED"
	codeInferenceTimeout = "INFERENCE_TIMEOUT"
	codeVRAMOOM          = "VRAM_OOM"
	codeQueueFull        = "QUEUE_FULL"
	codeShuttingDown     = "SHUTTING_DOWN"
	codeDuplicateJob     = "DUPLICATE_JOB"
	codeInternal         = "INTERNAL"
	codeUnauthorized     = "UNAUTHORIZED"
	codeNotFound         = "NOT_FOUND"
	codeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	codeRequestTimeout   = "REQUEST_TIMEOUT"
	codeKVCacheFull      = "KV_CACHE_FULL"
)

// retriable says whether a request that failed with code may succeed when
// sent again unchanged, later or to another worker. It is the one rule for
// error events, HTTP error bodies and websocket refusals alike.
func retriable(code string) bool {
	switch code {
	case codeQueueFull, codeShuttingDown, codeInferenceTimeout, codeVRAMOOM, codeKVCacheFull:
		return true
	}
	return false
}

type startedEvent struct {
	JobID     string `json:"job_id"`
	Model     string `json:"model"`
	StartedAt string `json:"started_at"`
	Seed      uint64 `json:"seed"`
}

type tokenEvent struct {
	T string `json:"t"`
	I int    `json:"i"`
	// Channel is the Harmony channel of chat completions' text; the
	// worker API streams raw text and never sets it.
	Channel string `json:"-"`
}

type endEvent struct {
	TokensOut    int    `json:"tokens_out"`
	DecodeTimeMs int64  `json:"decode_time_ms"`
	StopReason   string `json:"stop_reason"`
}

type errorEvent struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retriable bool   `json:"retriable"`
}

func newErrorEvent(code, msg string) errorEvent {
	return errorEvent{Code: code, Message: msg, Retriable: retriable(code)}
}

// event is one message of a job's stream.
type event struct {
	Name string
	Data any
}

func (e event) terminal() bool { return e.Name == evEnd || e.Name == evError }

// sseWriter writes server-sent events and flushes each one.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) (*sseWriter, error) {
	f, ok := w.(http.Flusher)
	if !ok {
		return nil, fmt.Errorf("response writer cannot stream")
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return &sseWriter{w, f}, nil
}

func (s *sseWriter) send(e event) error {
	b, err := json.Marshal(e.Data)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", e.Name, b); err != nil {
		return err
	}
	s.f.Flush()
	return nil
}

// data writes one unnamed "data:" event, as OpenAI's streams use.
func (s *sseWriter) data(payload []byte) error {
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", payload); err != nil {
		return err
	}
	s.f.Flush()
	return nil
}

// dataJSON writes v as the payload of a data event.
func (s *sseWriter) dataJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.data(b)
}

// writeJSONError writes the worker API's error body, shaped like the error
// event, with an HTTP status.
func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	httpjson.Write(w, status, newErrorEvent(code, msg))
}

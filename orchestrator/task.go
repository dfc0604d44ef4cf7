package orchestrator

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Stream event names (OC-CTRL-2020).
const (
	evStarted = "started"
	evToken   = "token"
	evMetrics = "metrics"
	evEnd     = "end"
	evError   = "error"
)

// Sampling are the worker API's generation fields, passed on as they are.
type Sampling struct {
	Temperature       *float64 `json:"temperature,omitempty"`
	TopP              *float64 `json:"top_p,omitempty"`
	TopK              *int     `json:"top_k,omitempty"`
	MinP              *float64 `json:"min_p,omitempty"`
	RepetitionPenalty *float64 `json:"repetition_penalty,omitempty"`
	Seed              *uint64  `json:"seed,omitempty"`
	Stop              []string `json:"stop,omitempty"`
}

// TaskRequest is the body of POST /v1/tasks.
type TaskRequest struct {
	TaskID    string `json:"task_id,omitempty"` // default: a UUID
	Model     string `json:"model,omitempty"`   // default: the pinned pool's, or the only model served
	Prompt    string `json:"prompt"`
	MaxTokens *int   `json:"max_tokens,omitempty"`
	Sampling
	PoolID     string `json:"pool_id,omitempty"`    // pin: this pool only
	SessionID  string `json:"session_id,omitempty"` // budgets and worker affinity
	OutputMode string `json:"output_mode,omitempty"`
}

// task is one admitted job: its request, where it runs, and its stream's
// transcript, which every reader of the stream replays and follows.
type task struct {
	id, corr  string
	req       TaskRequest
	model     string
	pinned    string // pool_id pin, "" for any pool of the model
	maxTokens int
	session   *session
	admitted  time.Time
	position  int   // queue position at admission
	predicted int64 // predicted start at admission, ms
	// placed carries the worker the dispatcher chose, or nil when the task
	// left the queue otherwise (cancelled, expired, its pool withdrawn).
	placed     chan *worker
	placements int // guarded by Orchestrator.mu

	// openai is set for the OpenAI front's requests, whose handler proxies
	// the worker's own response instead of relaying its worker-API stream.
	openai *openAIJob

	mu        sync.Mutex
	buf       []byte          // the SSE transcript, append-only
	readers   []chan struct{} // one per stream reader, signalled on every append
	tokens    int             // token events in buf
	done      bool            // buf ends with end or error
	worker    *worker         // where it was last placed
	started   time.Time       // the worker started it
	lastToken time.Time
	ended     time.Time
	seed      *uint64 // as the worker chose it
	outcome   string  // "end" or the error code
	decodeMs  int64
	// stopRelay tells the relay to stop reading; set while placed.
	stopRelay func()
	artifact  string // the job's artifact id, once recorded

	// holding: the terminal frame, from buf[held:] on, is not yet shown
	// to readers, until finished has booked the task (release), so that a
	// client whose stream ended reads its session's budget settled.
	holding bool
	held    int
}

func newTask(id, corr string, req TaskRequest) *task {
	return &task{id: id, corr: corr, req: req, placed: make(chan *worker, 1), admitted: time.Now()}
}

// appendLocked adds one frame to the transcript; t.mu is held.
func (t *task) appendLocked(name string, data []byte) {
	t.buf = append(t.buf, "event: "...)
	t.buf = append(t.buf, name...)
	t.buf = append(t.buf, "\ndata: "...)
	t.buf = append(t.buf, data...)
	t.buf = append(t.buf, "\n\n"...)
	t.signalLocked()
}

// signalLocked wakes every stream reader (one pending signal each).
func (t *task) signalLocked() {
	for _, r := range t.readers {
		select {
		case r <- struct{}{}:
		default: // already signalled
		}
	}
}

// appendFrame adds a frame unless the stream has ended.
func (t *task) appendFrame(name string, v any) {
	b, _ := json.Marshal(v)
	t.mu.Lock()
	if !t.done {
		t.appendLocked(name, b)
	}
	t.mu.Unlock()
}

// appendToken adds the worker's token event data verbatim: its {t, i} is
// the stream's. Nothing is appended once the stream has ended, so no token
// follows an acknowledged cancel. It reports the token count.
func (t *task) appendToken(data []byte) (n int, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return t.tokens, false
	}
	t.appendLocked(evToken, data)
	t.tokens++
	return t.tokens, true
}

// finish ends the stream with its one terminal frame; only the first call
// does anything, and only it returns true.
func (t *task) finish(name string, v any, outcome string) bool {
	b, _ := json.Marshal(v)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finishLocked(name, b, outcome)
}

func (t *task) finishLocked(name string, data []byte, outcome string) bool {
	if t.done {
		return false
	}
	t.holding, t.held = true, len(t.buf)
	t.appendLocked(name, data)
	t.done = true
	t.outcome = outcome
	t.ended = time.Now()
	return true
}

// release shows the terminal frame a finish held back (finished calls it
// once the task is booked).
func (t *task) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.holding = false
	t.signalLocked()
}

// cancel ends the stream with e unless it has ended, in one step with
// counting its tokens, so the count is final and the stream's last event
// is e. It reports the token count and whether it ended the stream.
func (t *task) cancel(e *apiError) (tokens int, ended bool) {
	b, _ := json.Marshal(e)
	t.mu.Lock()
	defer t.mu.Unlock()
	ended = t.finishLocked(evError, b, e.Code)
	return t.tokens, ended
}

func (t *task) endedAt() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ended
}

// follow registers a stream reader: its channel is signalled after each
// append; unfollow removes it.
func (t *task) follow() chan struct{} {
	c := make(chan struct{}, 1)
	t.mu.Lock()
	t.readers = append(t.readers, c)
	t.mu.Unlock()
	return c
}

func (t *task) unfollow(c chan struct{}) {
	t.mu.Lock()
	t.readers = slices.DeleteFunc(t.readers, func(r chan struct{}) bool { return r == c })
	t.mu.Unlock()
}

// snapshot returns the transcript from offset on and whether it has ended:
// up to its terminal frame, not ended, while finish holds that frame back.
func (t *task) snapshot(from int) ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holding {
		return t.buf[from:t.held], false
	}
	return t.buf[from:], t.done
}

// endFrame is the terminal success event (OC-CTRL-2020; decode_ms is the
// older name of decode_time_ms, sent too).
type endFrame struct {
	TokensOut    int    `json:"tokens_out"`
	DecodeTimeMs int64  `json:"decode_time_ms"`
	DecodeMs     int64  `json:"decode_ms"`
	StopReason   string `json:"stop_reason,omitempty"`
}

type startedFrame struct {
	QueuePosition    int    `json:"queue_position"`
	PredictedStartMs int64  `json:"predicted_start_ms"`
	TaskID           string `json:"task_id"`
}

// metricsFrame carries scheduling signals (OC-CTRL-2023) and the session's
// budget (OC-CTRL-2068). Workers keep no KV cache between jobs, so
// kv_warmth is always false.
type metricsFrame struct {
	QueueDepth        int          `json:"queue_depth"`
	OnTimeProbability *float64     `json:"on_time_probability,omitempty"`
	KVWarmth          bool         `json:"kv_warmth"`
	PoolID            string       `json:"pool_id,omitempty"`
	WorkerID          string       `json:"worker_id,omitempty"`
	TokensOut         int          `json:"tokens_out"`
	Budget            *budgetFrame `json:"budget,omitempty"`
}

func taskIDValid(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// itoa is strconv.Itoa, short.
func itoa(n int) string { return strconv.Itoa(n) }

package orchestrator

import (
	"bufio"
	"net/http"
	"time"

	"github.com/llama-orch/orc/internal/httpjson"
)

// handleStream serves a task's events (OC-CTRL-2020..2029): the transcript
// so far, then each frame as it is appended, until the terminal one. The
// writer is buffered and flushed once per batch of frames; frames are the
// worker's bytes, so a token costs no allocation here. Compression is never
// applied: token frames are small.
func (o *Orchestrator) handleStream(w http.ResponseWriter, r *http.Request) {
	t := o.taskOr404(w, r)
	if t == nil {
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	bw := bufio.NewWriterSize(w, 8<<10)
	changed := t.follow()
	defer t.unfollow(changed)
	sent := 0
	for {
		chunk, done := t.snapshot(sent)
		if len(chunk) > 0 {
			rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := bw.Write(chunk); err != nil {
				return
			}
			if bw.Flush() != nil || rc.Flush() != nil {
				return
			}
			sent += len(chunk)
			continue
		}
		if done {
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}

// taskOr404 finds the task of the request's path, or answers 404.
func (o *Orchestrator) taskOr404(w http.ResponseWriter, r *http.Request) *task {
	o.mu.Lock()
	t := o.tasks[r.PathValue("id")]
	o.mu.Unlock()
	if t == nil {
		writeError(w, newError(http.StatusNotFound, CodeNotFound, "no task "+r.PathValue("id")))
	}
	return t
}

// handleCancel is race-free (OC-CTRL-2012): once it answers, no token is
// added to the stream, which ends with error CANCELLED; tokens_delivered is
// how many token events the stream holds, exactly. Idempotent: a finished
// task answers with how it ended.
func (o *Orchestrator) handleCancel(w http.ResponseWriter, r *http.Request) {
	t := o.taskOr404(w, r)
	if t == nil {
		return
	}
	n, ended := t.cancel(newError(http.StatusOK, CodeCancelled, "cancelled by request"))
	status := "finished"
	if ended {
		status = "cancelled"
		o.ended(t)
		o.log.Info("cancelled", "task_id", t.id, "tokens_delivered", n, "correlation_id", correlationID(r))
	}
	t.mu.Lock()
	outcome := t.outcome
	t.mu.Unlock()
	httpjson.Write(w, http.StatusAccepted, map[string]any{"task_id": t.id, "status": status, "outcome": outcome, "tokens_delivered": n})
}

// handleTask reports a task's state and, once it ended, its artifact.
func (o *Orchestrator) handleTask(w http.ResponseWriter, r *http.Request) {
	t := o.taskOr404(w, r)
	if t == nil {
		return
	}
	t.mu.Lock()
	body := map[string]any{"task_id": t.id, "model": t.model, "tokens_out": t.tokens, "state": "queued"}
	switch {
	case t.done:
		body["state"], body["outcome"] = "done", t.outcome
	case !t.started.IsZero():
		body["state"] = "running"
	}
	if t.worker != nil {
		body["pool_id"], body["worker_id"] = t.worker.pool.id, t.worker.ID
	}
	if t.artifact != "" {
		body["artifact_id"] = t.artifact
	}
	t.mu.Unlock()
	httpjson.Write(w, http.StatusOK, body)
}

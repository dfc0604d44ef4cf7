package server

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/tokenizer"
)

// work runs queued jobs one at a time until the queue is closed.
func (s *Server) work() {
	for j := range s.sched.queue {
		s.sched.start(j)
		s.running.Add(1)
		res, ended := s.run(j)
		s.running.Add(-1)
		s.sched.finish(j, res, ended)
	}
}

// run executes one job and ends its stream with exactly one terminal event;
// it returns what the generation measured and whether the job ended
// normally.
func (s *Server) run(j *activeJob) (res runtime.GenerateResult, ended bool) {
	defer j.cancel(nil)
	out := s.newJobOutput(j)
	if context.Cause(j.ctx) != nil {
		s.failJob(j, out.log, context.Cause(j.ctx))
		return res, false
	}
	out.started()

	kv := min(len(j.prompt)+j.maxTokens, s.info.ContextLength)
	seq, err := s.dev.NewSequence(kv)
	if err != nil {
		s.failJob(j, out.log, err)
		return res, false
	}
	s.kvHeld.Store(int64(kv))
	defer s.kvHeld.Store(0)
	defer seq.Close()

	res, err = runtime.Generate(j.ctx, seq, j.prompt, runtime.GenerateParams{
		Sampling:      j.sampling,
		MaxTokens:     j.maxTokens,
		StopTokens:    s.tok.Info().StopIDs,
		PrefillChunk:  s.info.MaxTokens,
		ContextLength: s.info.ContextLength,
	}, out.token)
	return res, out.end(res, err)
}

// jobOutput turns a running job's tokens into its events: text through the
// detokenizer and the stop matcher, then the terminal event.
type jobOutput struct {
	s     *Server
	j     *activeJob
	log   *slog.Logger
	start time.Time
	dec   detokenizer
	stop  stopMatcher
	index int // of the next token event
	held  string
	ttft  time.Duration
}

func (s *Server) newJobOutput(j *activeJob) *jobOutput {
	out := &jobOutput{s: s, j: j, log: s.log.With("job_id", j.id, "correlation_id", j.correlation), stop: stopMatcher{stops: j.stop}}
	out.dec = plainText{s.tok.NewStream()}
	if j.reply != nil {
		out.dec = j.reply()
	}
	return out
}

// started logs the start and sends the started event.
func (o *jobOutput) started() {
	j := o.j
	o.start = time.Now()
	o.log.Info("execute_start", "prompt_tokens", len(j.prompt), "max_tokens", j.maxTokens, "seed", j.sampling.Seed)
	j.emit(event{evStarted, startedEvent{JobID: j.id, Model: o.s.info.Model, StartedAt: o.start.UTC().Format(time.RFC3339Nano), Seed: j.sampling.Seed}})
}

func (o *jobOutput) emit(channel, text string) {
	if text == "" {
		return
	}
	o.j.emit(event{evToken, tokenEvent{T: text, I: o.index, Channel: channel}})
	o.index++
}

// deliver passes text through the stop matcher and emits what it lets
// through; true when a stop string was matched.
func (o *jobOutput) deliver(channel, text string) (stopped bool) {
	if text == "" {
		return false
	}
	if channel != o.held {
		// A new message (Harmony) or part (reasoning, answer): what was
		// held ends the previous one, and no stop string spans two.
		o.emit(o.held, o.stop.flush())
		o.held = channel
	}
	text, stopped = o.stop.push(text)
	o.emit(channel, text)
	return stopped
}

// token is the generation's onToken: false ends it (a stop string, or the
// job's context ended).
func (o *jobOutput) token(id int32) bool {
	if o.ttft == 0 {
		o.ttft = time.Since(o.j.enqueued)
	}
	stopped := o.deliver(o.dec.push(id))
	return !stopped && o.j.ctx.Err() == nil
}

// end sends the terminal event for what the generation returned; true when
// the job ended normally.
func (o *jobOutput) end(res runtime.GenerateResult, err error) bool {
	s, j := o.s, o.j
	if cause := context.Cause(j.ctx); cause != nil {
		err = cause // cancelled, disconnected or timed out, whichever step noticed
	}
	if err != nil {
		s.metrics.generated(len(res.Tokens), o.ttft, res.DecodeDuration)
		s.failJob(j, o.log, err)
		return false
	}
	reason := res.StopReason
	if reason == runtime.StopStopped {
		reason = "stop"
	} else {
		o.deliver(o.dec.flush())
		o.emit(o.held, o.stop.flush())
	}
	s.metrics.generated(len(res.Tokens), o.ttft, res.DecodeDuration)
	s.metrics.request(outcomeOK)
	o.log.Info("execute_end", "tokens_out", len(res.Tokens), "stop_reason", reason,
		"ttft_ms", o.ttft.Milliseconds(), "decode_ms", res.DecodeDuration.Milliseconds(), "duration_ms", time.Since(o.start).Milliseconds())
	j.emit(event{evEnd, endEvent{TokensOut: len(res.Tokens), DecodeTimeMs: res.DecodeDuration.Milliseconds(), StopReason: reason}})
	return true
}

// failJob ends a job's stream with the error event its cause calls for.
func (s *Server) failJob(j *activeJob, log *slog.Logger, err error) {
	e := newErrorEvent(codeInternal, err.Error())
	outcome := outcomeError
	switch {
	case errors.Is(err, errCancelled), errors.Is(err, errDisconnected):
		e, outcome = newErrorEvent(codeCancelled, err.Error()), outcomeCancelled
	case errors.Is(err, errTimeout):
		e, outcome = newErrorEvent(codeInferenceTimeout, "job ran past the inference timeout of "+s.cfg.InferenceTimeout.String()), outcomeTimeout
	case errors.Is(err, errShutdown):
		e, outcome = newErrorEvent(codeShuttingDown, "server is shutting down"), outcomeCancelled
	case errors.Is(err, runtime.ErrOutOfMemory):
		e, outcome = newErrorEvent(codeVRAMOOM, err.Error()), outcomeOOM
	}
	s.metrics.request(outcome)
	log.Warn("error", "code", e.Code, "message", e.Message)
	j.emit(event{evError, e})
}

// detokenizer turns generated ids into text: plain text for /execute and
// completions, text by channel (reasoning on channelAnalysis) for the chat
// completions of reasoning models.
type detokenizer interface {
	push(id int32) (channel, text string)
	flush() (channel, text string)
}

// plainText is a tokenizer stream on no channel.
type plainText struct{ s *tokenizer.Stream }

func (p plainText) push(id int32) (channel, text string) { return "", p.s.Add(id) }
func (p plainText) flush() (channel, text string)        { return "", p.s.Flush() }

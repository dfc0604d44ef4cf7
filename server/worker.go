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
	log := s.log.With("job_id", j.id, "correlation_id", j.correlation)
	defer j.cancel(nil)
	if context.Cause(j.ctx) != nil {
		s.failJob(j, log, context.Cause(j.ctx))
		return res, false
	}
	start := time.Now()
	log.Info("execute_start", "prompt_tokens", len(j.prompt), "max_tokens", j.maxTokens, "seed", j.sampling.Seed)
	j.emit(event{evStarted, startedEvent{JobID: j.id, Model: s.info.Model, StartedAt: start.UTC().Format(time.RFC3339Nano), Seed: j.sampling.Seed}})

	kv := min(len(j.prompt)+j.maxTokens, s.info.ContextLength)
	seq, err := s.dev.NewSequence(kv)
	if err != nil {
		s.failJob(j, log, err)
		return res, false
	}
	s.kvHeld.Store(int64(kv))
	defer s.kvHeld.Store(0)
	defer seq.Close()

	var dec detokenizer = plainText{s.tok.NewStream()}
	if j.reply != nil {
		dec = j.reply()
	}
	stop := stopMatcher{stops: j.stop}
	index := 0
	var ttft time.Duration
	emit := func(channel, text string) {
		if text == "" {
			return
		}
		j.emit(event{evToken, tokenEvent{T: text, I: index, Channel: channel}})
		index++
	}
	held := "" // channel of the text the stop matcher holds back
	deliver := func(channel, text string) (stopped bool) {
		if text == "" {
			return false
		}
		if channel != held {
			// A new message (Harmony) or part (reasoning, answer): what was
			// held ends the previous one, and no stop string spans two.
			emit(held, stop.flush())
			held = channel
		}
		text, stopped = stop.push(text)
		emit(channel, text)
		return stopped
	}
	res, err = runtime.Generate(j.ctx, seq, j.prompt, runtime.GenerateParams{
		Sampling:      j.sampling,
		MaxTokens:     j.maxTokens,
		StopTokens:    s.tok.Info().StopIDs,
		PrefillChunk:  s.info.MaxTokens,
		ContextLength: s.info.ContextLength,
	}, func(id int32) bool {
		if ttft == 0 {
			ttft = time.Since(j.enqueued)
		}
		stopped := deliver(dec.push(id))
		return !stopped && j.ctx.Err() == nil
	})
	if cause := context.Cause(j.ctx); cause != nil {
		err = cause // cancelled, disconnected or timed out, whichever step noticed
	}
	if err != nil {
		s.metrics.generated(len(res.Tokens), ttft, res.DecodeDuration)
		s.failJob(j, log, err)
		return res, false
	}
	reason := res.StopReason
	if reason == runtime.StopStopped {
		reason = "stop"
	} else {
		deliver(dec.flush())
		emit(held, stop.flush())
	}
	s.metrics.generated(len(res.Tokens), ttft, res.DecodeDuration)
	s.metrics.request(outcomeOK)
	log.Info("execute_end", "tokens_out", len(res.Tokens), "stop_reason", reason,
		"ttft_ms", ttft.Milliseconds(), "decode_ms", res.DecodeDuration.Milliseconds(), "duration_ms", time.Since(start).Milliseconds())
	j.emit(event{evEnd, endEvent{TokensOut: len(res.Tokens), DecodeTimeMs: res.DecodeDuration.Milliseconds(), StopReason: reason}})
	return res, true
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

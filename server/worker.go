package server

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/llama-orch/orc/runtime"
)

// work runs queued jobs one at a time until the queue is closed.
func (s *Server) work() {
	for j := range s.sched.queue {
		start := time.Now()
		s.run(j)
		s.sched.finish(j, time.Since(start))
	}
}

// run executes one job and ends its stream with exactly one terminal event.
func (s *Server) run(j *activeJob) {
	log := s.log.With("job_id", j.id)
	defer j.cancel(nil)
	if context.Cause(j.ctx) != nil {
		s.failJob(j, log, context.Cause(j.ctx))
		return
	}
	start := time.Now()
	log.Info("execute_start", "prompt_tokens", len(j.prompt), "max_tokens", j.maxTokens, "seed", j.sampling.Seed)
	j.emit(event{evStarted, startedEvent{JobID: j.id, Model: s.info.Model, StartedAt: start.UTC().Format(time.RFC3339Nano), Seed: j.sampling.Seed}})

	seq, err := s.dev.NewSequence(min(len(j.prompt)+j.maxTokens, s.info.ContextLength))
	if err != nil {
		s.failJob(j, log, err)
		return
	}
	defer seq.Close()

	dec := s.tok.NewStream()
	stop := stopMatcher{stops: j.stop}
	index := 0
	var ttft time.Duration
	deliver := func(text string) {
		if text == "" {
			return
		}
		j.emit(event{evToken, tokenEvent{T: text, I: index}})
		index++
	}
	res, err := runtime.Generate(j.ctx, seq, j.prompt, runtime.GenerateParams{
		Sampling:     j.sampling,
		MaxTokens:    j.maxTokens,
		StopTokens:   s.tok.Info().StopIDs,
		PrefillChunk: s.info.MaxTokens,
	}, func(id int32) bool {
		if ttft == 0 {
			ttft = time.Since(j.enqueued)
		}
		text, stopped := stop.push(dec.Add(id))
		deliver(text)
		return !stopped && j.ctx.Err() == nil
	})
	if cause := context.Cause(j.ctx); cause != nil {
		err = cause // cancelled, disconnected or timed out, whichever step noticed
	}
	if err != nil {
		s.metrics.generated(len(res.Tokens), ttft, res.DecodeDuration)
		s.failJob(j, log, err)
		return
	}
	reason := res.StopReason
	if reason == runtime.StopStopped {
		reason = "stop"
	} else {
		text, _ := stop.push(dec.Flush())
		deliver(text + stop.flush())
	}
	s.metrics.generated(len(res.Tokens), ttft, res.DecodeDuration)
	s.metrics.request(outcomeOK)
	log.Info("execute_end", "tokens_out", len(res.Tokens), "stop_reason", reason,
		"ttft_ms", ttft.Milliseconds(), "decode_ms", res.DecodeDuration.Milliseconds(), "duration_ms", time.Since(start).Milliseconds())
	j.emit(event{evEnd, endEvent{TokensOut: len(res.Tokens), DecodeTimeMs: res.DecodeDuration.Milliseconds(), StopReason: reason}})
}

// failJob ends a job's stream with the error event its cause calls for.
func (s *Server) failJob(j *activeJob, log *slog.Logger, err error) {
	e := errorEvent{Code: codeInternal, Message: err.Error()}
	outcome := outcomeError
	switch {
	case errors.Is(err, errCancelled), errors.Is(err, errDisconnected):
		e = errorEvent{Code: codeCancelled, Message: err.Error()}
		outcome = outcomeCancelled
	case errors.Is(err, errTimeout):
		e = errorEvent{Code: codeInferenceTimeout, Message: "job ran past the inference timeout of " + s.cfg.InferenceTimeout.String(), Retriable: true}
		outcome = outcomeTimeout
	case errors.Is(err, errShutdown):
		e = errorEvent{Code: codeShuttingDown, Message: "server is shutting down", Retriable: true}
		outcome = outcomeCancelled
	case errors.Is(err, runtime.ErrOutOfMemory):
		e = errorEvent{Code: codeVRAMOOM, Message: err.Error(), Retriable: true}
		outcome = outcomeOOM
	}
	s.metrics.request(outcome)
	log.Warn("error", "code", e.Code, "message", e.Message)
	j.emit(event{evError, e})
}

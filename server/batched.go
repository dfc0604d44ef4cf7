package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/batching"
	"github.com/llama-orch/orc/runtime/kvcache"
)

// workBatched runs queued jobs on the batching scheduler until the queue is
// closed: between steps it admits jobs, oldest first, while a slot and the
// KV blocks of the oldest are free (the oldest waits for blocks; those
// behind it wait in the queue), then runs one step of every admitted job.
func (s *Server) workBatched() {
	b := s.cfg.Batch
	var waiting *activeJob // taken from the queue, waiting for a slot or blocks
	var out *jobOutput     // waiting's
	for {
		for {
			if waiting == nil {
				if b.Idle() {
					j, ok := <-s.sched.queue
					if !ok {
						return
					}
					waiting = j
				} else {
					select {
					case j, ok := <-s.sched.queue:
						if !ok {
							return // Drain closes the queue only once every job ended
						}
						waiting = j
					default:
					}
				}
				if waiting == nil {
					break
				}
				s.sched.heldBack.Add(1)
				out = s.newJobOutput(waiting)
			}
			if !s.admit(waiting, out) {
				break
			}
			s.sched.heldBack.Add(-1)
			waiting = nil
		}
		b.Step()
	}
}

// admit starts j on the scheduler, its events written by out, or fails it
// (cancelled meanwhile, or refused); false when it must wait for a slot or
// KV blocks.
func (s *Server) admit(j *activeJob, out *jobOutput) bool {
	b := s.cfg.Batch
	if cause := context.Cause(j.ctx); cause != nil {
		s.sched.start(j)
		s.failJob(j, out.log, cause)
		s.sched.finish(j, runtime.GenerateResult{}, false)
		j.cancel(nil)
		return true
	}
	r := s.batchRequest(j)
	r.OnToken = out.token
	r.Done = func(res runtime.GenerateResult, err error) {
		ended := out.end(res, err)
		s.sched.finish(j, res, ended)
		j.cancel(nil)
	}
	err := b.Admit(r)
	switch {
	case err == nil:
		s.sched.start(j)
		out.started()
		return true
	case (errors.Is(err, batching.ErrNoSlot) || errors.Is(err, kvcache.ErrNoBlocks)) && !b.Idle():
		return false
	}
	// Refused (submit checked that it fits, so this is a bug's trace, not
	// a client's error).
	s.sched.start(j)
	s.failJob(j, out.log, fmt.Errorf("admitting the job: %w", err))
	s.sched.finish(j, runtime.GenerateResult{}, false)
	j.cancel(nil)
	return true
}

// batchRequest is j as the batching scheduler takes it.
func (s *Server) batchRequest(j *activeJob) *batching.Request {
	return &batching.Request{Ctx: j.ctx, Prompt: j.prompt, Params: runtime.GenerateParams{
		Sampling:      j.sampling,
		MaxTokens:     j.maxTokens,
		StopTokens:    s.tok.Info().StopIDs,
		ContextLength: s.info.ContextLength,
	}}
}

// errKVTooSmall refuses a job whose KV positions (prompt and max_tokens)
// need more blocks than the whole pool holds.
var errKVTooSmall = errors.New("the KV cache pool is too small")

// checkFits refuses, before it is queued, a job the batching scheduler's KV
// pool could never hold.
func (s *Server) checkFits(j *activeJob) error {
	if s.cfg.Batch == nil {
		return nil
	}
	if err := s.cfg.Batch.Fits(s.batchRequest(j)); err != nil {
		return fmt.Errorf("%w: %v (--kv-bytes sizes it)", errKVTooSmall, err)
	}
	return nil
}

package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llama-orch/orc/runtime"
)

// Causes of a job's context ending early.
var (
	errCancelled    = errors.New("cancelled by request")
	errDisconnected = errors.New("client disconnected")
	errTimeout      = errors.New("inference timeout")
	errShutdown     = errors.New("server shutting down")
)

// activeJob is a job queued or running, with its event stream.
type activeJob struct {
	job
	ctx      context.Context
	cancel   context.CancelCauseFunc
	events   chan event
	gone     chan struct{} // closed when the consumer stops reading
	goneOnce sync.Once
	// mu orders token delivery against cancellation: the consumer holds it
	// while it writes a token, /cancel while it marks the job, so no token is
	// delivered after /cancel has answered.
	mu        sync.Mutex
	cancelled bool
	delivered int // token events delivered to the client
	enqueued  time.Time
	// correlation is the request's X-Correlation-Id, in every log line of
	// the job.
	correlation string
	promptChars int
	promptHash  string // promptHash of the prompt text
}

// emit hands an event to the consumer, or drops it once the consumer is gone.
func (j *activeJob) emit(e event) {
	select {
	case j.events <- e:
	case <-j.gone:
	}
}

func (j *activeJob) consumerGone() { j.goneOnce.Do(func() { close(j.gone) }) }

// markCancelled cancels the job; after it returns no token is delivered.
// It returns how many token events the client had been sent by then.
func (j *activeJob) markCancelled(cause error) int {
	j.mu.Lock()
	j.cancelled = true
	n := j.delivered
	j.mu.Unlock()
	j.cancel(cause)
	return n
}

// scheduler runs up to slots jobs at a time on the device (one, unless the
// server batches). Up to queueSize jobs wait behind the running ones; past
// that a request is refused with 429.
type scheduler struct {
	queue    chan *activeJob
	slots    int
	mu       sync.Mutex
	jobs     map[string]*activeJob // queued or running, by job id
	draining bool
	running  *activeJob               // the one running job when slots is 1; nil between jobs
	started  time.Time                // of running
	batched  map[*activeJob]time.Time // the running jobs and their starts when slots > 1
	pace     pace
	idle     sync.WaitGroup // running + queued jobs
	// heldBack counts jobs the batched worker took from the queue that
	// wait for a slot's KV blocks: still waiting, for the queue's depth.
	heldBack atomic.Int32
}

// newScheduler runs one job at a time; a batching server sets slots.
func newScheduler(queueSize int) *scheduler {
	return &scheduler{queue: make(chan *activeJob, queueSize), slots: 1, jobs: map[string]*activeJob{},
		batched: map[*activeJob]time.Time{}, pace: initialPace}
}

var (
	errQueueFull    = errors.New("queue full")
	errDuplicateJob = errors.New("a job with this job_id is queued or running")
)

// submit queues j or says why not.
func (s *scheduler) submit(j *activeJob) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return errShutdown
	}
	if _, dup := s.jobs[j.id]; dup {
		return errDuplicateJob
	}
	select {
	case s.queue <- j:
	default:
		return errQueueFull
	}
	s.jobs[j.id] = j
	s.idle.Add(1)
	return nil
}

// start marks j as running.
func (s *scheduler) start(j *activeJob) {
	s.mu.Lock()
	if s.slots == 1 {
		s.running, s.started = j, time.Now()
	} else {
		s.batched[j] = time.Now()
	}
	s.mu.Unlock()
}

// finish forgets j and folds what its run measured into the pace.
func (s *scheduler) finish(j *activeJob, res runtime.GenerateResult, ended bool) {
	s.mu.Lock()
	delete(s.jobs, j.id)
	delete(s.batched, j)
	if s.running == j {
		s.running = nil
	}
	s.pace.observe(j, res, ended)
	s.mu.Unlock()
	s.idle.Done()
}

func (s *scheduler) lookup(id string) *activeJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jobs[id]
}

// depth is the jobs waiting: queued, or held back for KV blocks.
func (s *scheduler) depth() int { return len(s.queue) + int(s.heldBack.Load()) }

// inUse is the number of running jobs.
func (s *scheduler) inUse() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running != nil {
		return 1
	}
	return len(s.batched)
}

// retryAfter is the documented back-off: the expected work ahead of a new
// job (the running jobs' expected remainders plus every queued job's
// expected time, by pace, shared by the slots), rounded up to whole
// seconds, at least 1.
func (s *scheduler) retryAfter() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ahead time.Duration
	for _, j := range s.jobs {
		d := s.pace.expect(j)
		if j == s.running {
			d = max(0, d-time.Since(s.started))
		} else if started, ok := s.batched[j]; ok {
			d = max(0, d-time.Since(started))
		}
		ahead += d
	}
	ahead /= time.Duration(s.slots)
	return max(1, int((ahead+time.Second-1)/time.Second))
}

// state says whether new jobs are refused and whether one runs.
func (s *scheduler) state() (draining, busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining, s.running != nil || len(s.batched) > 0
}

// drain refuses new jobs from now on.
func (s *scheduler) drain() {
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
}

// cancelAll cancels every queued and running job.
func (s *scheduler) cancelAll(cause error) {
	s.mu.Lock()
	jobs := make([]*activeJob, 0, len(s.jobs))
	for _, j := range s.jobs {
		jobs = append(jobs, j)
	}
	s.mu.Unlock()
	for _, j := range jobs {
		j.cancel(cause)
	}
}

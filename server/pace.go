package server

import (
	"time"

	"github.com/llama-orch/orc/runtime"
)

// pace is how fast finished jobs ran, for Retry-After: time per prompt
// token and per generated token, and the share of its max_tokens a job that
// ended normally generated (jobs stop early at end of text or a stop
// string). Each is a running mean weighting the newest job 1/4. Per-token
// times do not depend on how long jobs were, so a run of short or
// cancelled jobs does not make a queue of long ones look short.
type pace struct {
	prefill, decode time.Duration // per token
	fill            float64       // tokens generated / max_tokens
}

// initialPace stands until the first job is measured: a GPU-class decode
// step, and every job using its whole max_tokens.
var initialPace = pace{prefill: time.Millisecond, decode: 10 * time.Millisecond, fill: 1}

// expect is how long j is expected to run.
func (p pace) expect(j *activeJob) time.Duration {
	tokens := float64(j.maxTokens) * p.fill
	return time.Duration(len(j.prompt))*p.prefill + time.Duration(tokens*float64(p.decode))
}

// observe folds in one run of j; ended is true when it ended normally
// (not cancelled, timed out or failed).
func (p *pace) observe(j *activeJob, res runtime.GenerateResult, ended bool) {
	if res.PrefillDuration > 0 && len(j.prompt) > 0 {
		p.prefill = (3*p.prefill + res.PrefillDuration/time.Duration(len(j.prompt))) / 4
	}
	if n := len(res.Tokens); n > 1 && res.DecodeDuration > 0 {
		p.decode = (3*p.decode + res.DecodeDuration/time.Duration(n-1)) / 4
	}
	if ended && j.maxTokens > 0 {
		p.fill = (3*p.fill + float64(len(res.Tokens))/float64(j.maxTokens)) / 4
	}
}

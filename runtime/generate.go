package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/llama-orch/orc/runtime/sample"
)

// GenerateParams are one generation request's settings.
type GenerateParams struct {
	Sampling   sample.Params
	MaxTokens  int     // tokens to generate at most; > 0
	StopTokens []int32 // end-of-sequence ids: generation ends when one is sampled
	// ContextLength is the context the prompt and the generated tokens share
	// (the device's Info().ContextLength, or less); generation that fills it
	// ends with StopContext. 0: only the sequence's own end says so.
	ContextLength int
	// PrefillChunk is the most prompt tokens one Forward gets: the device's
	// Info().MaxTokens. 0 sends the whole prompt in one Forward.
	PrefillChunk int
}

// Stop reasons of GenerateResult.
const (
	StopMaxTokens = "max_tokens" // MaxTokens generated
	StopContext   = "context"    // the context is full (prompt + generated tokens)
	StopEOS       = "eos"        // a stop token was sampled
	StopStopped   = "stopped"    // onToken returned false
	StopCancelled = "cancelled"  // ctx was cancelled
)

// GenerateResult is what one generation produced.
type GenerateResult struct {
	Tokens          []int32 // generated ids, without the stop token
	StopReason      string
	PrefillDuration time.Duration // prompt processing up to the first token
	DecodeDuration  time.Duration // every later step
}

// Generate feeds prompt to seq, then samples up to p.MaxTokens tokens,
// calling onToken (when not nil) with each before the next step; onToken
// returning false ends generation with "stopped". A sampled stop token ends
// it with "eos" and is neither reported nor kept. ctx is checked between
// steps. The last generated token is not fed back, so seq.Pos() ends at
// len(prompt) + len(Tokens) − 1 (or len(prompt) with no token).
func Generate(ctx context.Context, seq Sequence, prompt []int32, p GenerateParams, onToken func(id int32) bool) (res GenerateResult, err error) {
	g, err := NewGeneration(prompt, p, onToken)
	if err != nil {
		return res, fmt.Errorf("generate: %w", err)
	}
	chunk := p.PrefillChunk
	if chunk <= 0 {
		chunk = len(prompt)
	}
	// next runs tokens and samples the token after them.
	next := func(tokens []int32) (int32, error) {
		return ForwardSample(ctx, seq, tokens, g.Sampler, g.Recent())
	}

	start := time.Now()
	var id int32
	for i := 0; i < len(prompt); i += chunk {
		if ctx.Err() != nil {
			return g.End(StopCancelled), nil
		}
		part := prompt[i:min(i+chunk, len(prompt))]
		if i+chunk < len(prompt) {
			_, err = seq.Forward(ctx, part)
		} else {
			id, err = next(part)
		}
		if err != nil {
			if ctx.Err() != nil {
				return g.End(StopCancelled), nil
			}
			return g.End(""), fmt.Errorf("generate: prefill: %w", err)
		}
	}
	g.res.PrefillDuration = time.Since(start)

	start = time.Now()
	defer func() { res.DecodeDuration = time.Since(start) }()
	for {
		if reason := g.Accept(id); reason != "" {
			return g.End(reason), nil
		}
		if ctx.Err() != nil {
			return g.End(StopCancelled), nil
		}
		if id, err = next([]int32{id}); err != nil {
			switch {
			case ctx.Err() != nil:
				return g.End(StopCancelled), nil
			case errors.Is(err, ErrContextFull):
				return g.End(StopContext), nil
			}
			return g.End(""), fmt.Errorf("generate: decode step %d: %w", len(g.res.Tokens), err)
		}
	}
}

// Generation is one request's state between sampled tokens: Generate's,
// and a batched scheduler's for each of its sequences, so that both end a
// generation by the same rules.
type Generation struct {
	Sampler *sample.Sampler
	p       GenerateParams
	prompt  int
	ctxLen  int
	// history holds the prompt and the generated tokens, for the penalty
	// and for prefix caching.
	history []int32
	onToken func(id int32) bool
	res     GenerateResult
}

// NewGeneration checks a request (max tokens, the prompt against the
// context, the sampling settings) and starts its generation.
func NewGeneration(prompt []int32, p GenerateParams, onToken func(id int32) bool) (*Generation, error) {
	if err := CheckMaxTokens(p.MaxTokens); err != nil {
		return nil, err
	}
	ctxLen := p.ContextLength
	if ctxLen <= 0 {
		ctxLen = len(prompt) + p.MaxTokens + 1 // never the limit
	}
	if err := CheckPrompt(len(prompt), ctxLen); err != nil {
		return nil, err
	}
	if err := p.Sampling.Validate(); err != nil {
		return nil, err
	}
	return &Generation{Sampler: sample.New(p.Sampling), p: p, prompt: len(prompt), ctxLen: ctxLen,
		history: slices.Clone(prompt), onToken: onToken}, nil
}

// Recent is the window of latest tokens the sampler's penalties read.
func (g *Generation) Recent() []int32 {
	return g.history[max(0, len(g.history)-sample.PenaltyWindow):]
}

// History is the prompt followed by the generated tokens.
func (g *Generation) History() []int32 { return g.history }

// Accept takes the token sampled after the last step: a stop token ends the
// generation with StopEOS (neither reported nor kept); otherwise the token
// is kept and reported to onToken (false ends it with StopStopped), and a
// full context or MaxTokens ends it. It returns the stop reason, or "" when
// the token is to be fed to the next step.
func (g *Generation) Accept(id int32) (reason string) {
	if slices.Contains(g.p.StopTokens, id) {
		return StopEOS
	}
	g.res.Tokens = append(g.res.Tokens, id)
	g.history = append(g.history, id)
	if g.onToken != nil && !g.onToken(id) {
		return StopStopped
	}
	// A full context says so even where MaxTokens was capped to fit it.
	if g.prompt+len(g.res.Tokens) >= g.ctxLen {
		return StopContext
	}
	if len(g.res.Tokens) >= g.p.MaxTokens {
		return StopMaxTokens
	}
	return ""
}

// End is the result with reason as its stop reason.
func (g *Generation) End(reason string) GenerateResult {
	g.res.StopReason = reason
	return g.res
}

// Timing records the prefill's and the decode's durations in the result.
func (g *Generation) Timing(prefill, decode time.Duration) {
	g.res.PrefillDuration, g.res.DecodeDuration = prefill, decode
}

// ForwardSample runs tokens on seq and returns the token s draws from the
// last step's logits with recent for the position after them: on the device
// when seq samples there (SamplingSequence), else from the logits on the
// host.
func ForwardSample(ctx context.Context, seq Sequence, tokens []int32, s *sample.Sampler, recent []int32) (int32, error) {
	if ss, ok := seq.(SamplingSequence); ok {
		return ss.ForwardSample(ctx, tokens, s, recent)
	}
	logits, err := seq.Forward(ctx, tokens)
	if err != nil {
		return -1, err
	}
	id := s.Sample(logits, recent, seq.Pos())
	if id < 0 {
		return -1, errors.New("the device returned empty logits")
	}
	return id, nil
}

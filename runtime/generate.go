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
	if err := CheckMaxTokens(p.MaxTokens); err != nil {
		return res, fmt.Errorf("generate: %w", err)
	}
	ctxLen := p.ContextLength
	if ctxLen <= 0 {
		ctxLen = len(prompt) + p.MaxTokens + 1 // never the limit
	}
	if err := CheckPrompt(len(prompt), ctxLen); err != nil {
		return res, fmt.Errorf("generate: %w", err)
	}
	if err := p.Sampling.Validate(); err != nil {
		return res, fmt.Errorf("generate: %w", err)
	}
	chunk := p.PrefillChunk
	if chunk <= 0 {
		chunk = len(prompt)
	}

	sampler := sample.New(p.Sampling)
	// history holds the prompt and the generated tokens, for the penalty.
	history := slices.Clone(prompt)
	// next runs tokens and samples the token after them.
	next := func(tokens []int32) (int32, error) {
		return ForwardSample(ctx, seq, tokens, sampler, history[max(0, len(history)-sample.PenaltyWindow):])
	}

	start := time.Now()
	var id int32
	for i := 0; i < len(prompt); i += chunk {
		if ctx.Err() != nil {
			res.StopReason = StopCancelled
			return res, nil
		}
		part := prompt[i:min(i+chunk, len(prompt))]
		if i+chunk < len(prompt) {
			_, err = seq.Forward(ctx, part)
		} else {
			id, err = next(part)
		}
		if err != nil {
			if ctx.Err() != nil {
				res.StopReason = StopCancelled
				return res, nil
			}
			return res, fmt.Errorf("generate: prefill: %w", err)
		}
	}
	res.PrefillDuration = time.Since(start)

	start = time.Now()
	defer func() { res.DecodeDuration = time.Since(start) }()
	for {
		if slices.Contains(p.StopTokens, id) {
			res.StopReason = StopEOS
			return res, nil
		}
		res.Tokens = append(res.Tokens, id)
		history = append(history, id)
		if onToken != nil && !onToken(id) {
			res.StopReason = StopStopped
			return res, nil
		}
		// A full context says so even where MaxTokens was capped to fit it.
		if len(prompt)+len(res.Tokens) >= ctxLen {
			res.StopReason = StopContext
			return res, nil
		}
		if len(res.Tokens) >= p.MaxTokens {
			res.StopReason = StopMaxTokens
			return res, nil
		}
		if ctx.Err() != nil {
			res.StopReason = StopCancelled
			return res, nil
		}
		if id, err = next([]int32{id}); err != nil {
			switch {
			case ctx.Err() != nil:
				res.StopReason = StopCancelled
				return res, nil
			case errors.Is(err, ErrContextFull):
				res.StopReason = StopContext
				return res, nil
			}
			return res, fmt.Errorf("generate: decode step %d: %w", len(res.Tokens), err)
		}
	}
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

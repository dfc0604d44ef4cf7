package server

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/llama-orch/orc/runtime/sample"
)

// Request limits of the worker API.
const (
	maxPromptChars   = 32768
	maxStopStrings   = 4
	maxStopTokens    = 32
	maxTokensCeiling = 2048
)

// ExecuteRequest is the body of POST /execute. Pointer fields are optional;
// nil means the default.
type ExecuteRequest struct {
	JobID             string   `json:"job_id"`
	Prompt            string   `json:"prompt"`
	MaxTokens         *int     `json:"max_tokens"`
	Temperature       *float64 `json:"temperature"`
	TopP              *float64 `json:"top_p"`
	TopK              *int     `json:"top_k"`
	RepetitionPenalty *float64 `json:"repetition_penalty"`
	MinP              *float64 `json:"min_p"`
	FrequencyPenalty  *float64 `json:"frequency_penalty"`
	PresencePenalty   *float64 `json:"presence_penalty"`
	Stop              []string `json:"stop"`
	Seed              *uint64  `json:"seed"`
}

// job is a validated request, ready for the worker.
type job struct {
	id        string
	prompt    []int32
	maxTokens int
	sampling  sample.Params
	stop      []string
	reply     func() detokenizer // splits a chat reply into reasoning and answer (chatReplyParser); nil streams raw text
}

// requestError is a validation failure: HTTP 400 naming the field.
type requestError struct {
	Field, Message string
}

func (e *requestError) Error() string { return e.Field + ": " + e.Message }

func invalid(field, format string, args ...any) *requestError {
	return &requestError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// validate checks every field against the worker API's ranges and returns the
// sampling settings (the seed drawn at random when omitted) and max tokens.
func (r *ExecuteRequest) validate(vocab, maxTokensOut int) (sample.Params, int, error) {
	var p sample.Params
	if strings.TrimSpace(r.JobID) == "" {
		return p, 0, invalid("job_id", "must be a non-empty string")
	}
	if len(r.JobID) > 256 {
		return p, 0, invalid("job_id", "must be at most 256 bytes")
	}
	if r.Prompt == "" {
		return p, 0, invalid("prompt", "must be a non-empty string")
	}
	if !utf8.ValidString(r.Prompt) {
		return p, 0, invalid("prompt", "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(r.Prompt); n > maxPromptChars {
		return p, 0, invalid("prompt", "has %d characters, at most %d allowed", n, maxPromptChars)
	}
	limit := min(maxTokensCeiling, maxTokensOut)
	maxTokens := min(256, limit)
	if r.MaxTokens != nil {
		if *r.MaxTokens < 1 || *r.MaxTokens > limit {
			return p, 0, invalid("max_tokens", "must be between 1 and %d, got %d", limit, *r.MaxTokens)
		}
		maxTokens = *r.MaxTokens
	}
	p.Temperature = 1
	if r.Temperature != nil {
		if !(*r.Temperature >= 0 && *r.Temperature <= 2) {
			return p, 0, invalid("temperature", "must be between 0 and 2, got %v", *r.Temperature)
		}
		p.Temperature = float32(*r.Temperature)
	}
	if r.TopP != nil {
		if !(*r.TopP >= 0 && *r.TopP <= 1) {
			return p, 0, invalid("top_p", "must be between 0 and 1, got %v", *r.TopP)
		}
		p.TopP = float32(*r.TopP)
	}
	if r.TopK != nil {
		if *r.TopK < 0 || *r.TopK > vocab {
			return p, 0, invalid("top_k", "must be between 0 and the vocabulary size %d, got %d", vocab, *r.TopK)
		}
		p.TopK = *r.TopK
	}
	p.RepetitionPenalty = 1
	if r.RepetitionPenalty != nil {
		if !(*r.RepetitionPenalty >= 0 && *r.RepetitionPenalty <= 2) {
			return p, 0, invalid("repetition_penalty", "must be between 0 and 2 (0 and 1 mean off), got %v", *r.RepetitionPenalty)
		}
		p.RepetitionPenalty = float32(*r.RepetitionPenalty)
	}
	for _, x := range []struct {
		field string
		v     *float64
		to    *float32
	}{{"frequency_penalty", r.FrequencyPenalty, &p.FrequencyPenalty}, {"presence_penalty", r.PresencePenalty, &p.PresencePenalty}} {
		if x.v == nil {
			continue
		}
		if !(*x.v >= -2 && *x.v <= 2) {
			return p, 0, invalid(x.field, "must be between -2 and 2, got %v", *x.v)
		}
		*x.to = float32(*x.v)
	}
	if r.MinP != nil {
		if !(*r.MinP >= 0 && *r.MinP <= 1) {
			return p, 0, invalid("min_p", "must be between 0 and 1, got %v", *r.MinP)
		}
		p.MinP = float32(*r.MinP)
	}
	if r.Seed != nil {
		p.Seed = *r.Seed
	} else {
		p.Seed = randomSeed()
		r.Seed = &p.Seed
	}
	return p, maxTokens, nil
}

// validateStop checks the stop strings; count(s) gives a string's token count.
func validateStop(stop []string, count func(string) int) error {
	if len(stop) > maxStopStrings {
		return invalid("stop", "at most %d strings allowed, got %d", maxStopStrings, len(stop))
	}
	for i, s := range stop {
		if s == "" {
			return invalid("stop", "string %d is empty", i)
		}
		if n := count(s); n > maxStopTokens {
			return invalid("stop", "string %d is %d tokens, at most %d allowed", i, n, maxStopTokens)
		}
	}
	return nil
}

func randomSeed() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return binary.LittleEndian.Uint64(b[:])
}

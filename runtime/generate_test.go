package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/llama-orch/orc/runtime/sample"
)

// countingSeq is a toy model whose next token is always (last + 1) mod
// vocab; it records the size of every Forward and enforces a context.
type countingSeq struct {
	vocab, ctxLen int
	pos           int
	calls         []int
	logits        []float32
}

func (s *countingSeq) Forward(_ context.Context, tokens []int32) ([]float32, error) {
	if s.pos+len(tokens) > s.ctxLen {
		return nil, fmt.Errorf("toy: %w", ErrContextFull)
	}
	s.pos += len(tokens)
	s.calls = append(s.calls, len(tokens))
	s.logits = make([]float32, s.vocab)
	s.logits[(int(tokens[len(tokens)-1])+1)%s.vocab] = 5
	return s.logits, nil
}
func (s *countingSeq) Pos() int     { return s.pos }
func (s *countingSeq) Close() error { return nil }

func TestGenerate(t *testing.T) {
	prompt := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	cases := []struct {
		name      string
		p         GenerateParams
		ctxLen    int
		stopAfter int // onToken returns false at this count (0 = never)
		want      []int32
		reason    string
		calls     []int
	}{
		{"max tokens, chunked prefill", GenerateParams{MaxTokens: 4, PrefillChunk: 4}, 100, 0,
			[]int32{11, 12, 13, 14}, StopMaxTokens, []int{4, 4, 2, 1, 1, 1}},
		{"eos not kept", GenerateParams{MaxTokens: 9, StopTokens: []int32{0, 13}}, 100, 0,
			[]int32{11, 12}, StopEOS, []int{10, 1, 1}},
		{"stopped by callback", GenerateParams{MaxTokens: 9}, 100, 2,
			[]int32{11, 12}, StopStopped, []int{10, 1}},
		{"context full", GenerateParams{MaxTokens: 9}, 12, 0,
			[]int32{11, 12, 13}, StopContext, []int{10, 1, 1}},
		// The server caps max tokens to the room the context leaves: 12
		// tokens hold the prompt and 2 generated ones.
		{"context full, max tokens capped to it", GenerateParams{MaxTokens: 2, ContextLength: 12}, 12, 0,
			[]int32{11, 12}, StopContext, []int{10, 1}},
		{"max tokens before the context", GenerateParams{MaxTokens: 2, ContextLength: 13}, 13, 0,
			[]int32{11, 12}, StopMaxTokens, []int{10, 1}},
		{"vocab wraps", GenerateParams{MaxTokens: 3, Sampling: sample.Params{RepetitionPenalty: 1.3}}, 100, 0,
			[]int32{11, 0, 1}, StopMaxTokens, []int{10, 1, 1}},
	}
	for _, c := range cases {
		vocab := 20
		if c.name == "vocab wraps" {
			vocab = 12
		}
		seq := &countingSeq{vocab: vocab, ctxLen: c.ctxLen}
		var streamed []int32
		res, err := Generate(context.Background(), seq, prompt, c.p, func(id int32) bool {
			streamed = append(streamed, id)
			return c.stopAfter == 0 || len(streamed) < c.stopAfter
		})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(res.Tokens, c.want) || res.StopReason != c.reason || !slices.Equal(seq.calls, c.calls) {
			t.Errorf("%s: tokens %v reason %s calls %v, want %v %s %v", c.name, res.Tokens, res.StopReason, seq.calls, c.want, c.reason, c.calls)
		}
		if !slices.Equal(streamed, res.Tokens) {
			t.Errorf("%s: streamed %v, result %v", c.name, streamed, res.Tokens)
		}
	}
}

// Limits are checked before any step runs, in the words the server uses.
func TestGenerateChecksLimitsFirst(t *testing.T) {
	for _, c := range []struct {
		prompt []int32
		p      GenerateParams
		want   string
	}{
		{nil, GenerateParams{MaxTokens: 4}, "generate: prompt: tokenizes to no tokens"},
		{[]int32{1}, GenerateParams{MaxTokens: -100}, "generate: max_tokens: must be at least 1, got -100"},
		{make([]int32, 12), GenerateParams{MaxTokens: 4, ContextLength: 12}, "generate: prompt: is 12 tokens; the context holds 12"},
	} {
		seq := &countingSeq{vocab: 20, ctxLen: 100}
		_, err := Generate(context.Background(), seq, c.prompt, c.p, nil)
		var le *LimitError
		if err == nil || err.Error() != c.want || !errors.As(err, &le) {
			t.Errorf("got %v, want %q", err, c.want)
		}
		if len(seq.calls) != 0 {
			t.Errorf("%q: ran %v before refusing", c.want, seq.calls)
		}
	}
}

func TestGenerateCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	seq := &countingSeq{vocab: 50, ctxLen: 100}
	res, err := Generate(ctx, seq, []int32{1}, GenerateParams{MaxTokens: 20}, func(id int32) bool {
		if id == 4 {
			cancel()
		}
		return true
	})
	if err != nil || res.StopReason != StopCancelled || !slices.Equal(res.Tokens, []int32{2, 3, 4}) {
		t.Errorf("got %v %s %v", res.Tokens, res.StopReason, err)
	}
	res, err = Generate(ctx, &countingSeq{vocab: 5, ctxLen: 9}, []int32{1}, GenerateParams{MaxTokens: 2}, nil)
	if err != nil || res.StopReason != StopCancelled || len(res.Tokens) != 0 {
		t.Errorf("cancelled before prefill: %v %s %v", res.Tokens, res.StopReason, err)
	}
}

func TestGenerateBadInput(t *testing.T) {
	seq := &countingSeq{vocab: 5, ctxLen: 4}
	bad := []struct {
		prompt []int32
		p      GenerateParams
	}{
		{nil, GenerateParams{MaxTokens: 1}},
		{[]int32{1}, GenerateParams{}},
		{[]int32{1}, GenerateParams{MaxTokens: 1, Sampling: sample.Params{Temperature: 3}}},
		{[]int32{1, 2, 3, 4, 5}, GenerateParams{MaxTokens: 1}}, // prompt beyond the context
	}
	for i, b := range bad {
		if _, err := Generate(context.Background(), seq, b.prompt, b.p, nil); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}

// samplingSeq samples through ForwardSample, as the CUDA device does, and
// records the recent ids each call was given.
type samplingSeq struct {
	countingSeq
	recents [][]int32
}

func (s *samplingSeq) ForwardSample(ctx context.Context, tokens []int32, sm *sample.Sampler, recent []int32) (int32, error) {
	logits, err := s.Forward(ctx, tokens)
	if err != nil {
		return -1, err
	}
	s.recents = append(s.recents, slices.Clone(recent))
	return sm.Sample(logits, recent, s.Pos()), nil
}

// TestGenerateSamplesOnDevice: a SamplingSequence samples every token, with
// the penalty window of the history so far, and generation is the same.
func TestGenerateSamplesOnDevice(t *testing.T) {
	prompt := make([]int32, 70)
	for i := range prompt {
		prompt[i] = int32(i % 20)
	}
	p := GenerateParams{MaxTokens: 5, PrefillChunk: 32, Sampling: sample.Params{Temperature: 0.8, Seed: 3}}
	host := &countingSeq{vocab: 20, ctxLen: 100}
	want, err := Generate(context.Background(), host, prompt, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	dev := &samplingSeq{countingSeq: countingSeq{vocab: 20, ctxLen: 100}}
	got, err := Generate(context.Background(), dev, prompt, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Tokens, want.Tokens) || !slices.Equal(dev.calls, host.calls) {
		t.Fatalf("on device: tokens %v calls %v; on the host: %v %v", got.Tokens, dev.calls, want.Tokens, host.calls)
	}
	if len(dev.recents) != len(got.Tokens) {
		t.Fatalf("%d ForwardSample calls for %d tokens", len(dev.recents), len(got.Tokens))
	}
	history := slices.Concat(prompt, got.Tokens)
	for i, r := range dev.recents {
		end := len(prompt) + i
		if !slices.Equal(r, history[end-sample.PenaltyWindow:end]) {
			t.Fatalf("call %d: recent %v, want the %d ids before position %d", i, r, sample.PenaltyWindow, end)
		}
	}
}

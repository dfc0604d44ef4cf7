package cpu

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
	"github.com/llama-orch/orc/tokenizer"
)

// storiesGolden holds transformers' greedy ids (scripts/reference_logits.py).
const storiesGolden = "../../testdata/reference/stories260k.json"

// openStories opens the real stories260k model, compiled with steps of at
// most maxTokens tokens, and its tokenizer.
func openStories(t *testing.T, maxTokens int) (*Device, tokenizer.Tokenizer) {
	t.Helper()
	p := compiledPlan(t, storiesGGUF, maxTokens)
	tok, err := tokenizer.Load(p.Manifest.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dev, tok
}

func generate(t *testing.T, dev *Device, prompt []int32, p runtime.GenerateParams) runtime.GenerateResult {
	t.Helper()
	seq, err := dev.NewSequence(dev.Info().ContextLength)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	p.PrefillChunk = dev.Info().MaxTokens
	res, err := runtime.Generate(context.Background(), seq, prompt, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The generation loop over the CPU device, prefilling the prompt in chunks
// of 2 tokens (max_tokens 2), reproduces transformers' 40 greedy tokens.
func TestStoriesGenerateMatchesReference(t *testing.T) {
	var want struct {
		PromptIDs []int32 `json:"prompt_ids"`
		IDs       []int32 `json:"ids"`
		Text      string  `json:"text"`
	}
	data, err := os.ReadFile(storiesGolden)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	dev, tok := openStories(t, 2)
	res := generate(t, dev, want.PromptIDs, runtime.GenerateParams{MaxTokens: len(want.IDs)})
	if !slices.Equal(res.Tokens, want.IDs) || res.StopReason != runtime.StopMaxTokens {
		t.Fatalf("got %v (%s) %q\nwant %v %q", res.Tokens, res.StopReason, tok.Decode(res.Tokens), want.IDs, want.Text)
	}
}

// A seeded sampled generation repeats exactly; another seed differs.
func TestStoriesSampledDeterminism(t *testing.T) {
	dev, tok := openStories(t, 16)
	prompt := append([]int32{tok.Info().BOS}, tok.Encode("The cat", false)...)
	p := runtime.GenerateParams{MaxTokens: 30, Sampling: sample.Params{Temperature: 1, TopK: 40, TopP: 0.95, RepetitionPenalty: 1.1, Seed: 11}}
	a, b := generate(t, dev, prompt, p), generate(t, dev, prompt, p)
	if !slices.Equal(a.Tokens, b.Tokens) {
		t.Fatalf("seed 11 twice: %v vs %v", a.Tokens, b.Tokens)
	}
	p.Sampling.Seed = 12
	if c := generate(t, dev, prompt, p); slices.Equal(a.Tokens, c.Tokens) {
		t.Errorf("seeds 11 and 12 both gave %v", a.Tokens)
	}
}

// Sequences of one device may step from several goroutines (the server's
// jobs): they share the arena, so steps must not interleave. Each must get
// what it gets alone.
func TestConcurrentSequences(t *testing.T) {
	dev, tok := openStories(t, 4)
	prompts := [][]int32{
		append([]int32{tok.Info().BOS}, tok.Encode("Once upon a time", false)...),
		append([]int32{tok.Info().BOS}, tok.Encode("The little dog", false)...),
	}
	p := runtime.GenerateParams{MaxTokens: 40}
	alone := make([][]int32, len(prompts))
	for i, pr := range prompts {
		alone[i] = generate(t, dev, pr, p).Tokens
	}
	together := make([][]int32, len(prompts))
	var wg sync.WaitGroup
	for i, pr := range prompts {
		wg.Go(func() {
			seq, err := dev.NewSequence(64)
			if err != nil {
				t.Error(err)
				return
			}
			defer seq.Close()
			res, err := runtime.Generate(context.Background(), seq, pr, runtime.GenerateParams{MaxTokens: 40, PrefillChunk: 4}, nil)
			if err != nil {
				t.Error(err)
			}
			together[i] = res.Tokens
		})
	}
	wg.Wait()
	for i := range prompts {
		if !slices.Equal(alone[i], together[i]) {
			t.Errorf("prompt %d: alone %v, concurrently %v", i, alone[i], together[i])
		}
	}
}

package compiler_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/cpu"
	"github.com/llama-orch/orc/tokenizer"
)

// referenceDir holds the transformers goldens (scripts/reference_logits.py).
const referenceDir = "../testdata/reference"

const storiesGGUF = "../../shared/testdata/models/stories260k-f32.gguf"

// cpuPlan compiles model for the CPU device into a temporary plan and opens
// it on the device.
func cpuPlan(t *testing.T, model string, maxTokens int) (*cpu.Device, *plans.Plan) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plan")
	if err := compiler.Compile(compiler.Options{Model: model, Out: dir, Target: "cpu", MaxTokens: maxTokens}); err != nil {
		t.Fatal(err)
	}
	p, err := plans.Open(dir, plans.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := cpu.Open(p, cpu.Options{})
	if err != nil {
		p.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dev, p
}

// greedy prefills prompt in one step, then runs steps decode steps feeding
// back the argmax. It returns every step's logits (prefill's first) and the
// steps+1 greedy ids.
func greedy(t *testing.T, dev runtime.Device, prompt []int32, steps int) ([][]float32, []int32) {
	t.Helper()
	seq, err := dev.NewSequence(len(prompt) + steps + 1)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	var rows [][]float32
	var ids []int32
	in := prompt
	for s := 0; s <= steps; s++ {
		logits, err := seq.Forward(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, slices.Clone(logits))
		ids = append(ids, argmax(logits))
		in = ids[len(ids)-1:]
	}
	return rows, ids
}

// argmax returns the first index of the largest value, as torch.argmax and
// numpy.argmax do.
func argmax(xs []float32) int32 {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return int32(best)
}

func readGolden(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(referenceDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestReferenceStories: the real stories260k model on the CPU device gives
// transformers' greedy ids for "Once upon a time", from the same prompt ids.
func TestReferenceStories(t *testing.T) {
	var want struct {
		Prompt    string  `json:"prompt"`
		PromptIDs []int32 `json:"prompt_ids"`
		IDs       []int32 `json:"ids"`
		Text      string  `json:"text"`
	}
	readGolden(t, "stories260k.json", &want)
	dev, p := cpuPlan(t, storiesGGUF, 16)
	spec, err := tokenizer.UnmarshalSpec(p.Manifest.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	prompt := tok.Encode(want.Prompt, false)
	if spec.AddBOS {
		prompt = append([]int32{spec.BOS}, prompt...)
	}
	if !slices.Equal(prompt, want.PromptIDs) {
		t.Fatalf("prompt %q tokenizes to %v, transformers' golden used %v", want.Prompt, prompt, want.PromptIDs)
	}
	_, ids := greedy(t, dev, prompt, len(want.IDs)-1)
	if !slices.Equal(ids, want.IDs) {
		t.Fatalf("greedy ids\n got %v (%q)\nwant %v (%q)", ids, tok.Decode(ids), want.IDs, want.Text)
	}
	if got := tok.Decode(ids); got != want.Text {
		t.Errorf("decoded text %q, want %q", got, want.Text)
	}
}

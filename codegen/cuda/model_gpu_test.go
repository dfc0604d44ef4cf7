package cuda_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"
)

// transformersGolden is the part of a scripts/reference_logits.py golden
// this test reads (testdata/reference/README.md has the format).
type transformersGolden struct {
	Vocab    int     `json:"vocab"`
	Prompt   []int32 `json:"prompt"`
	Greedy   []int32 `json:"greedy"`
	ProbeIDs []int   `json:"probe_ids"`
	Steps    []struct {
		Argmax      int       `json:"argmax"`
		Logits      []float64 `json:"logits"`
		TopIDs      []int     `json:"top_ids"`
		TopLogits   []float64 `json:"top_logits"`
		ProbeLogits []float64 `json:"probe_logits"`
	} `json:"steps"`
}

// TestGPUModelFile runs the GGUF model ORC_GGUF names (a model too big to
// synthesise in a test, e.g. `orcc synth --preset gpt-oss-20b-2l`) on the GPU
// and on the CPU reference device, as TestGPUPresetsMatchCPU does. When
// ORC_REF_JSON names a transformers golden of the same model
// (reference_logits.py hf on its --hf-dir export), the GPU also gets the
// golden's prompt and then its greedy ids, and every logit the golden keeps
// is compared: error relative to the golden's largest kept |logit|, and
// top-1 agreement.
func TestGPUModelFile(t *testing.T) {
	gpuOnly(t)
	path := os.Getenv("ORC_GGUF")
	if path == "" {
		t.Skip("set ORC_GGUF to a GGUF model")
	}
	const maxTokens, ctx, steps = 16, 128, 24
	gdev, vocab := openGPUFile(t, path, maxTokens, ctx)
	if ref := os.Getenv("ORC_REF_JSON"); ref != "" {
		var want transformersGolden
		data, err := os.ReadFile(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if want.Vocab != vocab {
			t.Fatalf("golden vocab %d, model %d", want.Vocab, vocab)
		}
		seq, err := gdev.NewSequence(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var diff, scale float64
		agree := 0
		in := want.Prompt
		for s, ws := range want.Steps {
			row, err := seq.Forward(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			check := func(id int, v float64) {
				diff, scale = max(diff, math.Abs(float64(row[id])-v)), max(scale, math.Abs(v))
			}
			for i, v := range ws.Logits {
				check(i, v)
			}
			for i, id := range ws.TopIDs {
				check(id, ws.TopLogits[i])
			}
			for i, id := range want.ProbeIDs {
				check(id, ws.ProbeLogits[i])
			}
			if argmax(row) == ws.Argmax {
				agree++
			}
			in = want.Greedy[s : s+1]
		}
		seq.Close()
		t.Logf("GPU vs transformers: max |Δlogit| %.3g of max |logit| %.3g (%.2e), top-1 %d/%d", diff, scale, diff/scale, agree, len(want.Steps))
		if diff/scale > 2e-2 || agree < len(want.Steps)*8/9 {
			t.Errorf("GPU and transformers disagree: relative error %.2e, top-1 %d/%d", diff/scale, agree, len(want.Steps))
		}
	}
	cdev := openCPU(t, path, maxTokens)
	prompt := make([]int32, 7)
	for i := range prompt {
		prompt[i] = int32((i*7919 + 13) % vocab)
	}
	worst, agree := compareSequences(t, cdev, gdev, prompt, steps)
	t.Logf("GPU vs CPU device: max |gpu-cpu|/max|cpu| = %.2e over %d steps, greedy top-1 agreement %d/%d", worst, steps+1, agree, steps+1)
	if worst > 2e-2 || agree < steps*9/10 {
		t.Errorf("GPU and CPU disagree: relative error %.2e, top-1 %d/%d", worst, agree, steps+1)
	}
}

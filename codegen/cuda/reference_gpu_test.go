package cuda_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/internal/reference"
	"github.com/llama-orch/orc/runtime"
)

// referenceGolden is where a tiny preset's transformers golden lies in
// $ORC_REFERENCE_DIR: <preset>.json for f32 and <preset>-q4_k_m.json (the
// committed testdata/reference files), <preset>-f16.json for f16 (made on the GPU
// host by `reference_logits.py gguf` from `orcc synth --quant f16 --seed 1`,
// as scripts/gpu_acceptance.sh's agree step does).
func referenceGolden(dir, preset string, q synth.Quant) string {
	if q == synth.QuantF32 {
		return filepath.Join(dir, preset+".json")
	}
	return filepath.Join(dir, preset+"-"+string(q)+".json")
}

// q4Goldens are the presets with a q4_k_m golden (committed, made by
// testdata/reference/regenerate.sh from the --hf-dir export).
var q4Goldens = synth.WithCheck(synth.CheckGoldenQ4KM)

// TestGPUReference runs the tiny presets in f32 and f16 (and q4_k_m where
// q4Goldens has them) on the GPU against
// Hugging Face transformers: the golden's 16-token prompt, then each decode
// step fed the golden's greedy id. Every row's argmax must be
// transformers' and every logit the golden kept (and the row's log-sum-exp)
// within agreeTolerance of the row's largest |logit|.
func TestGPUReference(t *testing.T) {
	gpuOnly(t)
	dir := os.Getenv("ORC_REFERENCE_DIR")
	if dir == "" {
		t.Skip("GPU vs transformers: set ORC_REFERENCE_DIR to a directory of goldens (see referenceGolden)")
	}
	var configs []agreeConfig
	var goldens []*reference.Golden
	for _, p := range agreePresets {
		quants := []synth.Quant{synth.QuantF32, synth.QuantF16}
		if slices.Contains(q4Goldens, p) {
			quants = append(quants, synth.QuantQ4KM)
		}
		for _, q := range quants {
			path := referenceGolden(dir, p, q)
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && q != synth.QuantF16 {
				// A committed golden not made yet (regenerate.sh on this host
				// makes it); the f16 ones the agree step makes here.
				t.Logf("%s %s: skipped, %s is not made yet", p, q, path)
				continue
			}
			g, err := reference.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			configs, goldens = append(configs, agreeConfig{preset: p, quant: q}), append(goldens, g)
		}
	}
	models := t.TempDir()
	names := make([]string, len(configs))
	for i, c := range configs {
		names[i] = c.String()
	}
	if !inParallel(t, names, func(t *testing.T, i int) {
		model := filepath.Join(models, names[i]+".gguf")
		configs[i].write(t, model)
		data, err := os.ReadFile(model)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != goldens[i].GGUFSHA256 {
			t.Fatalf("synth writes another %s than the golden's (sha256 %x, golden %s): regenerate the golden", names[i], sum, goldens[i].GGUFSHA256)
		}
		buildGPU(t, model, gpuMaxTokens)
	}) {
		t.FailNow()
	}
	for i := range configs {
		t.Run(names[i], func(t *testing.T) {
			want := goldens[i]
			worst, agree := compareGolden(t, openGPUModel(t, filepath.Join(models, names[i]+".gguf")), want)
			t.Logf("%-26s max|gpu-hf|/max|hf| %.2e (bound %.0e)  top-1 %d/%d", names[i], worst, agreeTolerance, agree, len(want.Steps))
			if worst > agreeTolerance || agree != len(want.Steps) {
				t.Errorf("GPU vs transformers: relative error %.2e (bound %.0e), greedy top-1 %d/%d", worst, agreeTolerance, agree, len(want.Steps))
			}
		})
	}
}

// compareGolden feeds dev the golden's prompt, then its greedy ids, and
// returns the largest step error (reference.Golden.StepError) relative to
// that step's scale, and how many steps' argmax is the golden's greedy id.
func compareGolden(t *testing.T, dev runtime.Device, want *reference.Golden) (worst float64, agree int) {
	t.Helper()
	seq, err := dev.NewSequence(len(want.Prompt) + len(want.Steps))
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	in := want.Prompt
	for s := range want.Steps {
		row, err := seq.Forward(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		e, scale, err := want.StepError(s, row)
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, e/scale)
		if int32(argmax(row)) == want.Greedy[s] {
			agree++
		}
		in = want.Greedy[s : s+1]
	}
	return worst, agree
}

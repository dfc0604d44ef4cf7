package synth

import (
	"fmt"
	"slices"
)

// Check is a GPU-host check that takes a preset. A preset lists its checks
// (Preset.Checks); `orcc synth --list --check NAME` prints the presets of
// one, which scripts/gpu_acceptance.sh and testdata/reference/regenerate.sh
// loop over, and the GPU tests read the same lists, so a new preset joins
// the acceptance where it is declared.
type Check string

const (
	// CheckGoldenF32: a transformers golden of the f32 file, converted by
	// reference_logits.py itself (regenerate.sh), which the --hf-dir
	// export must reproduce (gpu_acceptance.sh hf); the CPU device runs
	// it in CI.
	CheckGoldenF32 Check = "golden-f32"
	// CheckGoldenQ4KM: a golden of the q4_k_m file through its --hf-dir
	// export (regenerate.sh), run by the CPU device in CI and by the GPU.
	CheckGoldenQ4KM Check = "golden-q4_k_m"
	// CheckGoldenF16: an f16 golden made on the GPU host; the GPU agrees
	// with it and with the CPU device in f16, q4_0 and q4_k_m
	// (gpu_acceptance.sh agree).
	CheckGoldenF16 Check = "golden-f16"
	// CheckFullF16, CheckFullQ4_0 and CheckFullQ4KM: the full-size preset
	// in that quantisation on the GPU against transformers, 64 greedy
	// steps (gpu_acceptance.sh full).
	CheckFullF16  Check = "full-f16"
	CheckFullQ4_0 Check = "full-q4_0"
	CheckFullQ4KM Check = "full-q4_k_m"
	// CheckBench: the full-size preset (its default quantisation) runs
	// orcrun bench (gpu_acceptance.sh recent).
	CheckBench Check = "bench"
)

// Checks lists every check.
var Checks = []Check{CheckGoldenF32, CheckGoldenQ4KM, CheckGoldenF16, CheckFullF16, CheckFullQ4_0, CheckFullQ4KM, CheckBench}

// ParseCheck reads a check's name.
func ParseCheck(name string) (Check, error) {
	if c := Check(name); slices.Contains(Checks, c) {
		return c, nil
	}
	return "", fmt.Errorf("synth: unknown check %q (checks: %v)", name, Checks)
}

// WithCheck returns the names of the presets that check c takes, sorted.
func WithCheck(c Check) []string {
	var names []string
	for _, p := range Presets() {
		if slices.Contains(p.Checks, c) {
			names = append(names, p.Name)
		}
	}
	return names
}

// Check sets of the presets.
var (
	// goldenTiny: transformers goldens of the f32 and f16 files.
	goldenTiny = []Check{CheckGoldenF32, CheckGoldenF16}
	// goldenTinyQ4: and of the q4_k_m file.
	goldenTinyQ4 = []Check{CheckGoldenF32, CheckGoldenF16, CheckGoldenQ4KM}
)

// Package reference reads the transformers goldens of testdata/reference
// (written by scripts/reference_logits.py; the format is in that
// directory's README) and measures a device's logits against them.
package reference

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// Golden is one tiny preset's golden: a prompt, transformers' greedy ids and
// the logits it kept per step (prefill's last row first).
type Golden struct {
	Name       string  `json:"name"`
	ModelType  string  `json:"model_type"` // transformers' config.model_type
	GGUFSHA256 string  `json:"gguf_sha256"`
	Vocab      int     `json:"vocab"`
	Prompt     []int32 `json:"prompt"`
	Greedy     []int32 `json:"greedy"`
	ProbeIDs   []int   `json:"probe_ids"`
	Steps      []Step  `json:"steps"`
}

// Step is one logits row as the golden keeps it: the whole row when the
// vocabulary is small, else the top 64 and the probes at Golden.ProbeIDs.
type Step struct {
	Argmax      int32     `json:"argmax"`
	LogSumExp   float64   `json:"logsumexp"`
	Logits      []float64 `json:"logits"`
	TopIDs      []int     `json:"top_ids"`
	TopLogits   []float64 `json:"top_logits"`
	ProbeLogits []float64 `json:"probe_logits"`
}

// Load reads a golden file.
func Load(path string) (*Golden, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var g Golden
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(g.Steps) != len(g.Greedy) {
		return nil, fmt.Errorf("%s: %d steps but %d greedy ids", path, len(g.Steps), len(g.Greedy))
	}
	return &g, nil
}

// StepError compares row, a device's whole logits row for step s, with the
// golden: the largest |row[id] − golden| over every logit the golden kept
// and over the row's log-sum-exp, and the largest |golden logit| kept (the
// row's scale: its top logit is always kept).
func (g *Golden) StepError(s int, row []float32) (maxErr, scale float64, err error) {
	if len(row) != g.Vocab {
		return 0, 0, fmt.Errorf("step %d: %d logits, the golden's vocabulary is %d", s, len(row), g.Vocab)
	}
	st := &g.Steps[s]
	check := func(id int, v float64) {
		maxErr = max(maxErr, finite(math.Abs(float64(row[id])-v)))
		scale = max(scale, math.Abs(v))
	}
	for id, v := range st.Logits {
		check(id, v)
	}
	for i, id := range st.TopIDs {
		check(id, st.TopLogits[i])
	}
	for i, id := range g.ProbeIDs {
		check(id, st.ProbeLogits[i])
	}
	return max(maxErr, finite(math.Abs(LogSumExp(row)-st.LogSumExp))), scale, nil
}

// finite maps NaN to +Inf: a NaN error would otherwise pass every bound
// (max and > propagate or ignore it).
func finite(e float64) float64 {
	if math.IsNaN(e) {
		return math.Inf(1)
	}
	return e
}

// LogSumExp is log Σ exp(x) of a logits row, in float64.
func LogSumExp(xs []float32) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, float64(x))
	}
	var s float64
	for _, x := range xs {
		s += math.Exp(float64(x) - m)
	}
	return m + math.Log(s)
}

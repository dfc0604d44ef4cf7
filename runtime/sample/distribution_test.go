package sample_test

import (
	"testing"

	"github.com/llama-orch/orc/runtime/sample"
	"github.com/llama-orch/orc/runtime/sample/sampletest"
)

// TestDistribution: for each shape of logits and each setting, 100,000
// seeded draws (one per position) follow the exact distribution after
// penalties, temperature, top-k, top-p and min-p (chi-square, p ≥ 0.001).
func TestDistribution(t *testing.T) {
	const n, draws = 32, 100_000
	settings, recent := sampletest.Settings(n)
	for _, v := range sampletest.Vectors(n) {
		for _, p := range settings {
			p.Seed = 12345
			s := sample.New(p)
			f := make([]int, n)
			for pos := range draws {
				f[s.Sample(v.Logits, recent, pos)]++
			}
			pv, err := sampletest.ChiSquare(f, sampletest.Expected(v.Logits, p, recent))
			if err != nil || pv < 0.001 {
				t.Errorf("%s %+v: p-value %.2g, %v; counts %v", v.Name, p, pv, err, f)
			}
		}
	}
}

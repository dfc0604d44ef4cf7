package batching

import (
	"slices"
	"testing"

	"github.com/llama-orch/orc/runtime/sample"
)

// A step whose sampling rows are all greedy takes the device's picks
// (runtime.BatchPicker), one with a row that samples the device's draws
// (runtime.BatchSampler): the logits never come back. Each request gives
// the tokens it gives alone.
func TestBatchedStepsTakeTheDevicePicksAndDraws(t *testing.T) {
	dev := openStories(t)
	vocab := dev.Info().Vocab
	for _, tc := range []struct {
		name    string
		jobs    []*job
		sampled bool
	}{
		{"greedy", mixedJobs(3, vocab, 12), false},
		{"mixed", mixedJobs(4, vocab, 12), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "greedy" && slices.ContainsFunc(tc.jobs, func(j *job) bool { return j.params.Sampling != (sample.Params{}) }) {
				t.Fatal("the greedy set samples")
			}
			alone := eachAlone(t, dev, tc.jobs)
			cd := &countingDevice{Device: dev}
			s, err := New(cd, Config{Slots: 4, PrefillChunk: 8})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			runAll(t, s, tc.jobs)
			for i, j := range tc.jobs {
				if !slices.Equal(j.res.Tokens, alone[i]) {
					t.Errorf("job %d: %v batched, %v alone", i, j.res.Tokens, alone[i])
				}
			}
			if b := cd.b; b.greedy == 0 || b.steps != 0 || (b.sampled > 0) != tc.sampled {
				t.Errorf("%d steps took the device's picks, %d its draws, %d the logits", b.greedy, b.sampled, b.steps)
			}
		})
	}
}

package cuda

import (
	"fmt"
	"testing"

	"github.com/llama-orch/orc/plans"
)

func TestKVBytes(t *testing.T) {
	// Qwen2.5-0.5B: 24 layers, 2 KV heads of 64, fp16, K and V.
	m := plans.Model{NLayer: 24, NHeadKV: 2, HeadDim: 64}
	if got, want := kvBytes(&m, 4096), int64(24*2*4096*2*64*2); got != want {
		t.Fatalf("kvBytes = %d, want %d", got, want)
	}
}

func TestProgressMarks(t *testing.T) {
	var got []int
	report := func(p int) { got = append(got, p) }
	last := progressMarks(0, 100, -25, 0, report)
	for _, done := range []int64{10, 30, 49, 50, 99, 100} {
		last = progressMarks(done, 100, last, 75, report)
	}
	progressMarks(100, 100, last, 100, report)
	if fmt.Sprint(got) != "[0 25 50 75 100]" {
		t.Fatalf("marks %v", got)
	}
	got = nil
	progressMarks(0, 0, progressMarks(0, 0, -25, 0, report), 100, report)
	if fmt.Sprint(got) != "[0 25 50 75 100]" {
		t.Fatalf("empty upload marks %v", got)
	}
}

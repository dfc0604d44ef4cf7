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

func TestSkipped(t *testing.T) {
	sched := []plans.Launch{{Kernel: "rmsnorm_rows_Norm_0"}, {Kernel: "qkv_q8_W"}, {Kernel: "attend_decode_Attn_1"},
		{Kernel: "linear_q8_W"}, {Kernel: "rmsnorm_rows_Norm_0"}, {Kernel: "sample_argmax"}}
	names := func(s []plans.Launch) string {
		var n []string
		for _, l := range s {
			n = append(n, l.Kernel)
		}
		return fmt.Sprint(n)
	}
	for _, c := range []struct {
		skip []string
		want string
	}{
		{nil, "[rmsnorm_rows_Norm_0 qkv_q8_W attend_decode_Attn_1 linear_q8_W rmsnorm_rows_Norm_0 sample_argmax]"},
		{[]string{""}, "[rmsnorm_rows_Norm_0 qkv_q8_W attend_decode_Attn_1 linear_q8_W rmsnorm_rows_Norm_0 sample_argmax]"},
		{[]string{"attend_decode"}, "[rmsnorm_rows_Norm_0 qkv_q8_W linear_q8_W rmsnorm_rows_Norm_0 sample_argmax]"},
		{[]string{"rmsnorm_rows", "linear_q8"}, "[qkv_q8_W attend_decode_Attn_1 sample_argmax]"},
	} {
		if got := names(skipped(sched, c.skip)); got != c.want {
			t.Errorf("skip %q: %s, want %s", c.skip, got, c.want)
		}
	}
	if got := skipped(sched, []string{"moe_"}); &got[0] != &sched[0] {
		t.Error("nothing skipped: want the schedule itself")
	}
}

package main

import (
	"testing"

	"github.com/llama-orch/orc/plans"
)

func TestLaunchTable(t *testing.T) {
	ls := []plans.Launch{{Kernel: "rmsnorm_rows_b"}, {Kernel: "linear_q8_a"}, {Kernel: "rmsnorm_rows_b"}, {Kernel: "attend_decode_c"}}
	want := "     2  rmsnorm_rows_b\n     1  attend_decode_c\n     1  linear_q8_a\n"
	if got := launchTable(ls); got != want {
		t.Errorf("launchTable:\n%s\nwant:\n%s", got, want)
	}
}

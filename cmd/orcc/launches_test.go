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

func TestLaunchReport(t *testing.T) {
	k := &plans.Kernels{Decode: []plans.Launch{{Kernel: "a"}, {Kernel: "b"}, {Kernel: "a"}}}
	want := "decode step, 3 launches:\n     2  a\n     1  b\n"
	if got := launchReport(k); got != want {
		t.Errorf("without a batched step:\n%s\nwant:\n%s", got, want)
	}
	k.BatchDecode, k.BatchDecodeMaxRows = []plans.Launch{{Kernel: "c"}, {Kernel: "a"}}, 64
	k.BatchRows = []plans.Launch{{Kernel: "head"}}
	want += "batched decode step of up to 64 rows, 2 launches over its tokens:\n     1  a\n     1  c\n" +
		"then 1 over its rows:\n     1  head\n"
	if got := launchReport(k); got != want {
		t.Errorf("with a batched step:\n%s\nwant:\n%s", got, want)
	}
}

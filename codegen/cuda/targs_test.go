package cuda

import (
	"slices"
	"testing"
)

// TestRenderTArgsTrailingDefaults: zero omitzero fields are left out only
// as a trailing run; one before a non-zero field (the stream's shared
// memory of a swiglu_q8 that does not stream, before its tanh-GELU gate)
// keeps its place, so the gate lands in the template's last parameter.
func TestRenderTArgsTrailingDefaults(t *testing.T) {
	a := swigluQ8Args{W: noWeight, In: 2560, F: 10240, S: 48, Warps: 8, dotTail: dotTail{Rows: 0, TT: 1}}
	silu := renderTArgs(a)
	a.Gate = gateGELUTanh
	gelu := renderTArgs(a)
	if want := append(slices.Clone(silu), "0", "GateGELUTanh"); !slices.Equal(gelu, want) {
		t.Errorf("with the GELU gate: %v, want %v", gelu, want)
	}
	if silu[len(silu)-1] != "1" {
		t.Errorf("SiLU: %v, want the token tile last (SMEM and GATE defaulted)", silu)
	}
}

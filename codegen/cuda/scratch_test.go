package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
)

// TestSwiGLUQuantizesForDown: in a decode step, each SwiGLU that feeds an
// integer-path down projection writes the int16 form of its output past the
// int16 input it reads itself, and the down projection reads exactly that:
// it neither quantizes the row again nor waits for a quantize_x8 launch.
func TestSwiGLUQuantizesForDown(t *testing.T) {
	out, _ := tinyOutput(t, "qwen2.5-0.5b-tiny", synth.QuantQ4KM)
	dec := out.Kernels.Decode
	seen := 0
	for i, l := range dec {
		if !strings.HasPrefix(l.Kernel, "swiglu_q8") {
			continue
		}
		seen++
		// swiglu_q8(wg, wu, xq, xs, y, yq, ys, state); linear_q8(w, xq, xs, y, state)
		sw := l.Args
		if len(sw) != 8 || i+1 == len(dec) {
			t.Fatalf("launch %d %s: %d arguments (want 8: its int16 output too), %d launches", i, l.Kernel, len(sw), len(dec))
		}
		down := dec[i+1]
		if !strings.HasPrefix(down.Kernel, "linear_q8") || len(down.Args) != 5 {
			t.Fatalf("launch %d after the SwiGLU is %s with %d arguments, want linear_q8(w, xq, xs, y, state)", i+1, down.Kernel, len(down.Args))
		}
		if down.Args[1] != sw[5] || down.Args[2] != sw[6] {
			t.Errorf("launch %d: the down projection reads %v, %v; the SwiGLU wrote %v, %v", i+1, down.Args[1], down.Args[2], sw[5], sw[6])
		}
		// The input's scales follow its codes and are an eighth of their
		// bytes (8 bytes a 32-group of 2-byte codes) before alignment.
		xq, xs, yq := sw[2].Offset, sw[3].Offset, sw[5].Offset
		if yq < xs+(xs-xq)/8 {
			t.Errorf("launch %d: the SwiGLU's int16 output at %d overlaps its input's codes at %d and scales at %d", i, yq, xq, xs)
		}
	}
	if seen == 0 {
		t.Fatal("no swiglu_q8 launch in the decode schedule")
	}
}

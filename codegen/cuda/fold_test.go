package cuda_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
)

// TestDecodeFoldsNormsIntoTensorCores: in tiny Phi-3 Q4_K_M's decode step
// (its qkv on the tensor cores), each qkv_mma normalizes its row itself
// (XNorm) with no norm launched before it, reading the row the launch
// before it wrote (the embedding, or the residual sum the down projection
// wrote: linear_q8's RES), and that launch lets it start only at its end
// (a LaunchesAtEnd variant, no grid_dep_launch); the prefill keeps its norm
// launches.
func TestDecodeFoldsNormsIntoTensorCores(t *testing.T) {
	out, _ := tinyOutput(t, "phi-3-mini-4k-tiny", synth.QuantQ4KM)
	bodies := map[string]string{}
	for _, k := range wrapperRE.FindAllStringSubmatch(out.Source, -1) {
		bodies[k[1]] = k[2]
	}
	dec := out.Kernels.Decode
	folded := 0
	for i, l := range dec {
		if !strings.HasPrefix(l.Kernel, "qkv_mma") {
			continue
		}
		folded++
		if !strings.HasPrefix(l.Kernel, "qkv_mma_XNorm") {
			t.Errorf("decode launch %d: %s reads no folded norm", i, l.Kernel)
		}
		// qkv_mma(wq, wk, wv, a, nw, positions, y, kc, vc, state)
		if a := l.Args[3]; !slices.Contains(dec[i-1].Args, a) {
			t.Errorf("decode launch %d: %s reads %+v, which launch %d (%s) does not write", i, l.Kernel, a, i-1, dec[i-1].Kernel)
		}
		prev := dec[i-1].Kernel
		if strings.Contains(prev, "norm_rows") || !strings.HasSuffix(prev, "_at_end") {
			t.Errorf("decode launch %d before %s: %s, want a LaunchesAtEnd variant of the residual's producer", i-1, l.Kernel, prev)
		}
		if body, ok := bodies[prev]; !ok || strings.Contains(body, "grid_dep_launch") {
			t.Errorf("kernel %s: wrapper found %v, body %q, want no grid_dep_launch", prev, ok, body)
		}
	}
	if folded != 2 {
		t.Errorf("%d qkv_mma decode launches, want 2 (a layer)", folded)
	}
	norms := 0
	for _, l := range out.Kernels.Prefill {
		if strings.HasPrefix(l.Kernel, "rmsnorm_rows") {
			norms++
		}
	}
	if norms != 5 {
		t.Errorf("%d prefill norm launches, want 5", norms)
	}
}

package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
)

// TestSegmentedLaneSets: a decode linear of Phi-3-mini's qkv shape (9216 ×
// 3072 Q5_K, 48 groups a row) takes lane sets of 48 (whole 16-lane
// segments, intLanes), and its source compiles with nvcc for sm_80 and
// sm_90: block_rows_sum's segment sums and in_sets are instantiated only
// at such widths, which no tiny preset has. TestGPUSmallGEMV runs the same
// shape against float64 on the GPU host.
func TestSegmentedLaneSets(t *testing.T) {
	const out, in = 9216, 3072
	gt, _ := gguf.TypeByName("Q5_K")
	g, man := gemvGraph(t, ir.Q5_K, 1, out, in, out*gt.RowBytes(in))
	got, err := cuda.Generate(g, man, cuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range got.Kernels.Decode {
		if strings.HasPrefix(l.Kernel, "linear_q8") {
			found = true
			if !strings.Contains(l.Kernel, "_3072_9216_48_") || l.GridB[0] != 461 {
				t.Errorf("%s in %d blocks, want sets of 48 lanes in 461 blocks", l.Kernel, l.GridB[0])
			}
		}
	}
	if !found {
		t.Fatal("no linear_q8 launch in the decode schedule")
	}
	compiles(t, got.Source)
}

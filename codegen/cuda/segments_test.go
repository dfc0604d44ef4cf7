package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// TestSegmentedLaneSets: a decode linear_q8 of Phi-3-mini's qkv shape
// (9216 × 3072 Q5_K, 48 groups a row; as the LM head over the last row,
// which keeps linear_q8 where a linear before it takes linear_mmas) takes
// lane sets of 48 (whole 16-lane segments, intLanes), and its source
// compiles with nvcc for sm_80 and sm_90: block_rows_sum's segment sums
// and in_sets are instantiated only at such widths, which no tiny preset
// has. TestGPUSmallGEMV runs the same shape against float64 on the GPU
// host.
func TestSegmentedLaneSets(t *testing.T) {
	const out, in = 9216, 3072
	gt, _ := gguf.TypeByName("Q5_K")
	g, x, man := tableGraph("segments", in, out)
	w := g.Add(ir.OpWeight, ir.Q5_K, ir.Shape{out, in}, map[string]any{"name": "w"})
	last := g.Add(ir.OpLast, ir.F32, ir.Shape{1, in}, nil, x)
	g.Outputs = []*ir.Node{g.Add(ir.OpLinear, ir.F32, ir.Shape{1, out}, nil, last, w)}
	man.Tensors = append(man.Tensors, plans.Tensor{Name: "w", DType: ir.Q5_K.String(), Shape: []int64{out, in}, Bytes: out * gt.RowBytes(in)})
	runGPUPasses(t, g, man)
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

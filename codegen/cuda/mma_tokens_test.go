package cuda_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// TestCodegenStreamsRecordedTokens: the batched decode step of Phi-3-mini
// at real width takes mma_halves for its qkv as chooseKernels recorded it
// (clusters of mmah_cluster blocks, each its range of the activations in
// dynamic shared memory, passes.MMAHalvesSmem; the activations in
// mmah_x_halves halves), a
// cluster that does not divide the row refused; turned to mma_tokens, the streamed kernel where
// the node records mmat_slab, with the stages' and the staged
// activations' shared memory on the launch, the one-round kernel without
// the record, and a slab the weight cannot be streamed in refused.
func TestCodegenStreamsRecordedTokens(t *testing.T) {
	g, man, _ := lowerGPU(t, writeShapes(t, "phi-3-mini-4k", 1, synth.QuantQ4KM), fullWidthMaxTokens)
	var qkv *ir.Node
	for _, n := range g.Nodes {
		if n.Op == ir.OpQKV {
			qkv = n
		}
	}
	if qkv == nil || qkv.Str("batch_decode_kernel") != ir.KernelMMAHalves || qkv.Int("mmah_cluster") < 1 {
		t.Fatalf("Phi-3-mini's qkv: %v, want an mma_halves batch_decode_kernel and its shape", qkv)
	}
	launch := func(fn string) (plans.Launch, bool) {
		for _, l := range generate(t, g, man, "").Kernels.BatchDecode {
			if strings.HasPrefix(l.Kernel, fn) {
				return l, true
			}
		}
		return plans.Launch{}, false
	}
	cl := qkv.Int("mmah_cluster")
	if l, ok := launch("qkv_mmah_"); !ok || int64(l.Smem) != passes.MMAHalvesSmem(12/cl, 2, qkv.Int("mmah_warps"), qkv.Int("mmah_x_halves")) || l.GridB[0] != cl*qkv.Int("mmah_clusters") {
		t.Errorf("recorded mma_halves %v: the batched decode's qkv_mmah is %+v", qkv.Attrs, l)
	}
	for _, xh := range []int64{1, 2} { // the activations' halves: the kernel's template argument and its staged bytes
		qkv.Attrs["mmah_x_halves"] = xh
		want := fmt.Sprintf("_%d_%d_%d_2_0", cl, qkv.Int("mmah_warps"), xh) // …_C_NW_XH_NT_ROWS
		if l, ok := launch("qkv_mmah_"); !ok || !strings.HasSuffix(l.Kernel, want) || int64(l.Smem) != passes.MMAHalvesSmem(12/cl, 2, qkv.Int("mmah_warps"), xh) {
			t.Errorf("recorded mmah_x_halves %d: the batched decode's qkv_mmah is %+v, want a name ending %s", xh, l, want)
		}
	}
	qkv.Attrs["mmah_cluster"] = int64(5) // not a divisor of 12 super-blocks
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "records mma_halves clusters of 5 blocks") {
		t.Errorf("clusters of 5 over rows of 3072: %v, want a refusal", err)
	}
	for _, k := range []string{"mmah_cluster", "mmah_warps", "mmah_x_halves", "mmah_clusters"} {
		delete(qkv.Attrs, k)
	}
	qkv.Attrs["batch_decode_kernel"] = ir.KernelMMATokens
	qkv.Attrs["mmat_slab"], qkv.Attrs["mmat_stage_x"] = int64(1536), true
	// Four stages of 16 rows of (768 + 16) + (192 + 16) + (96 + 16) bytes,
	// and 96 slices × 16 tokens × 72 bytes of activations.
	if l, _ := launch("qkv_mmat_stream_"); l.Smem != 4*17664+110592 {
		t.Errorf("recorded mmat_slab: the batched decode's qkv_mmat_stream has %d bytes of shared memory, want %d", l.Smem, 4*17664+110592)
	}
	delete(qkv.Attrs, "mmat_slab")
	delete(qkv.Attrs, "mmat_stage_x")
	if l, ok := launch("qkv_mmat_W"); !ok || l.Smem != 0 {
		t.Errorf("no mmat_slab: the batched decode's one-round qkv_mmat launched %v with %d bytes of shared memory", ok, l.Smem)
	}
	qkv.Attrs["mmat_slab"] = int64(1280) // 5 super-blocks: not a slab of 12
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "records mmat_slab 1280") {
		t.Errorf("a slab of 1280 of rows of 3072: %v, want a refusal", err)
	}
}

package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/ir"
)

// TestCodegenStreamsRecordedTokens: the batched decode step of Phi-3-mini
// at real width takes the streamed mma_tokens kernels where chooseKernels
// recorded mmat_slab (every matrix node: each has at least a tile an SM),
// with the stages' and the staged activations' shared memory on the
// launch; the one-round kernel without the record; and a slab the weight
// cannot be streamed in is refused.
func TestCodegenStreamsRecordedTokens(t *testing.T) {
	g, man, _ := lowerGPU(t, writeShapes(t, "phi-3-mini-4k", 1, synth.QuantQ4KM), fullWidthMaxTokens)
	var qkv *ir.Node
	for _, n := range g.Nodes {
		if n.Op == ir.OpQKV {
			qkv = n
		}
	}
	if qkv == nil || qkv.Int("mmat_slab") != 1536 || !qkv.Bool("mmat_stage_x") {
		t.Fatalf("Phi-3-mini's qkv: %v, want mmat_slab 1536 with mmat_stage_x", qkv)
	}
	smem := func(fn string) int {
		for _, l := range generate(t, g, man, "").Kernels.BatchDecode {
			if strings.HasPrefix(l.Kernel, fn) {
				return l.Smem
			}
		}
		return -1
	}
	// Four stages of 16 rows of (768 + 16) + (192 + 16) + (96 + 16) bytes,
	// and 96 slices × 16 tokens × 72 bytes of activations.
	if got, want := smem("qkv_mmat_stream_"), 4*17664+110592; got != want {
		t.Errorf("recorded mmat_slab: the batched decode's qkv_mmat_stream has %d bytes of shared memory, want %d", got, want)
	}
	delete(qkv.Attrs, "mmat_slab")
	delete(qkv.Attrs, "mmat_stage_x")
	if got := smem("qkv_mmat_W"); got != 0 {
		t.Errorf("no mmat_slab: the batched decode's one-round qkv_mmat has %d bytes of shared memory (-1: none launched)", got)
	}
	qkv.Attrs["mmat_slab"] = int64(1280) // 5 super-blocks: not a slab of 12
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "records mmat_slab 1280") {
		t.Errorf("a slab of 1280 of rows of 3072: %v, want a refusal", err)
	}
}

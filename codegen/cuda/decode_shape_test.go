package cuda

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
)

// TestDecodeShape holds attend_decode's launch to the geometry its node
// records (passes.ChooseDecodeAttention) for the real models' attention
// shapes on each target and context: the splits and clusters recorded, a
// ring of the recorded stages within the target's DecodeAttnSmem beside
// the merge's area, two blocks an SM; and refuses a node without a
// geometry and clusters on a target without them.
func TestDecodeShape(t *testing.T) {
	shapes := []struct {
		name                        string
		heads, kvh, hd, window, ctx int64
	}{
		{"qwen2.5-0.5b", 14, 2, 64, 0, 32768},
		{"phi-3-mini", 32, 32, 96, 0, 4096},
		{"gpt-oss", 64, 8, 64, 0, 131072},
		{"gpt-oss windowed", 64, 8, 64, 128, 131072},
		{"stories260K", 8, 4, 8, 0, 512},
		{"context unknown", 32, 8, 128, 0, 0},
	}
	for _, arch := range passes.GPUArchs() {
		gpu, err := passes.GPUTarget(arch)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range shapes {
			n := attentionNode(s.heads, s.kvh, s.hd, s.window)
			g := &ir.Graph{Nodes: []*ir.Node{n}, Attrs: map[string]any{"ctx": s.ctx}}
			if err := passes.ChooseDecodeAttention(g, gpu); err != nil {
				t.Fatal(err)
			}
			d, err := tuning{gpu}.decodeShapeOf(n)
			if err != nil {
				t.Fatalf("%s %s: %v", arch, s.name, err)
			}
			want := gpu.DecodeAttention(s.heads/s.kvh, s.kvh, s.hd, s.window, s.ctx)
			switch {
			case d.splits != want.Splits || d.cluster != want.Cluster || d.stages != want.Stages || d.minKeys != want.MinKeys:
				t.Errorf("%s %s: launch %+v, node records %+v", arch, s.name, d, want)
			case d.stages > 1 && d.stages*passes.DecodeAttnStageBytes(s.hd, false) > gpu.DecodeAttnSmem:
				t.Errorf("%s %s: %d stages of %d bytes over the ring's %d", arch, s.name, d.stages, passes.DecodeAttnStageBytes(s.hd, false), gpu.DecodeAttnSmem)
			case 2*(d.smem()+1<<10) > gpu.SmemPerSM:
				t.Errorf("%s %s: %d bytes of shared memory a block, two do not fit an SM's %d", arch, s.name, d.smem(), gpu.SmemPerSM)
			}
		}
	}
	n := attentionNode(14, 2, 64, 0)
	sm80, _ := passes.GPUTarget("sm_80")
	if _, err := (tuning{sm80}).decodeShapeOf(n); err == nil || !strings.Contains(err.Error(), "no decode geometry") {
		t.Errorf("a node without a geometry: %v, want refused", err)
	}
	n.Attrs["decode_splits"], n.Attrs["decode_cluster"], n.Attrs["decode_stages"], n.Attrs["decode_min_keys"] = int64(16), int64(8), int64(1), int64(128)
	if _, err := (tuning{sm80}).decodeShapeOf(n); err == nil || !strings.Contains(err.Error(), "clusters of 8 on sm_80") {
		t.Errorf("clusters on sm_80: %v, want refused", err)
	}
}

// attentionNode is a decode attention node of the given shape.
func attentionNode(heads, kvh, hd, window int64) *ir.Node {
	return &ir.Node{Op: ir.OpAttention, Attrs: map[string]any{"heads": heads, "kv_heads": kvh, "head_dim": hd, "window": window}}
}

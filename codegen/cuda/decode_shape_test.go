package cuda

import (
	"testing"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
)

// TestDecodeShape holds attend_decode's grid to what the kernel assumes
// (static_assert in attention.cu.tmpl, the launch's cluster rule) and the
// target's limits, for the real models' attention shapes on each target
// and context: splits in whole clusters of at most 8 blocks (the portable
// cluster size), at most maxDecodeSplits and no more than the context fills
// with chunks of minKeys, two blocks an SM in shared memory; and that the
// tuned split rule does what the note says of Qwen2.5-0.5B on sm_90: one
// cluster of 8 a kv head, three stages.
func TestDecodeShape(t *testing.T) {
	shapes := []struct {
		name                string
		heads, kvh, hd, ctx int64
	}{
		{"qwen2.5-0.5b", 14, 2, 64, 32768},
		{"phi-3-mini", 32, 32, 96, 4096},
		{"gpt-oss", 64, 8, 64, 131072},
		{"stories260K", 8, 4, 8, 512},
		{"short context", 14, 2, 64, 300},
		{"context unknown", 32, 8, 128, 0},
	}
	for _, arch := range passes.GPUArchs() {
		gpu, err := passes.GPUTarget(arch)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range shapes {
			n := &ir.Node{Op: ir.OpAttention, Attrs: map[string]any{"heads": s.heads, "kv_heads": s.kvh, "head_dim": s.hd}}
			d := tuning{gpu}.decodeShapeOf(n, s.ctx)
			switch {
			case d.cluster < 1 || d.cluster > 8 || d.splits%d.cluster != 0:
				t.Errorf("%s %s: %d splits in clusters of %d", arch, s.name, d.splits, d.cluster)
			case d.cluster > 1 && arch != "sm_90":
				t.Errorf("%s %s: clusters of %d on a target without them", arch, s.name, d.cluster)
			case d.splits > maxDecodeSplits || s.ctx > 0 && (d.splits-1)*d.minKeys >= s.ctx:
				t.Errorf("%s %s: %d splits of at least %d keys for a context of %d", arch, s.name, d.splits, d.minKeys, s.ctx)
			case d.minKeys%decodeRound != 0 || d.stages < 1:
				t.Errorf("%s %s: chunks of %d keys, %d stages", arch, s.name, d.minKeys, d.stages)
			case 2*(d.smem()+1<<10) > gpu.SmemPerSM:
				t.Errorf("%s %s: %d bytes of shared memory a block, two do not fit an SM's %d", arch, s.name, d.smem(), gpu.SmemPerSM)
			}
		}
	}
	gpu, _ := passes.GPUTarget("sm_90")
	qwen := &ir.Node{Op: ir.OpAttention, Attrs: map[string]any{"heads": int64(14), "kv_heads": int64(2), "head_dim": int64(64)}}
	if d := (tuning{gpu}).decodeShapeOf(qwen, 32768); d.splits != 64 || d.cluster != 8 || d.stages != 3 || d.minKeys != 512 {
		t.Errorf("Qwen2.5-0.5B on sm_90: %+v, want 64 splits in clusters of 8, 3 stages, chunks of at least 512 keys", d)
	}
}

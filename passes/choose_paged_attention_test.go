package passes

import "testing"

// TestPagedAttention holds the batched-step attention geometry to what the
// rule says of the real widths: the stages the ring's budget holds (two at
// least), and two grids of the blocks an SM holds, four where their rings
// fit and fewer where two stages of a wide head do not.
func TestPagedAttention(t *testing.T) {
	sm90, _ := GPUTarget("sm_90")
	sm80, _ := GPUTarget("sm_80")
	cases := []struct {
		name           string
		gpu            GPU
		hd             int64
		stages, blocks int64
	}{
		{"Phi-3-mini", sm90, 96, 2, 2 * 132 * 4},
		{"Qwen2.5-0.5B", sm90, 64, 3, 2 * 132 * 4},
		{"head_dim 8", sm90, 8, 4, 2 * 132 * 4},
		{"Llama 8B", sm90, 128, 2, 2 * 132 * 3},
		{"head_dim 256", sm90, 256, 2, 2 * 132 * 1},
		{"Phi-3-mini, sm_80", sm80, 96, 2, 2 * 108 * 3},
		{"Qwen2.5-0.5B, sm_80", sm80, 64, 2, 2 * 108 * 4},
	}
	for _, c := range cases {
		p := c.gpu.PagedAttention(c.hd)
		if want := (PagedAttention{c.stages, c.blocks}); p != want {
			t.Errorf("%s: %+v, want %+v", c.name, p, want)
		}
		if p.Stages > 2 && p.Stages*PagedAttnStageBytes(c.hd) > c.gpu.PagedAttnSmem {
			t.Errorf("%s: %d stages of %d bytes over the budget of %d", c.name, p.Stages, PagedAttnStageBytes(c.hd), c.gpu.PagedAttnSmem)
		}
	}
}

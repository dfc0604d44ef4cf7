package passes

import "testing"

// TestPagedAttention holds the batched-step attention geometry to what the
// rule says of the real widths: the stages the ring's budget holds (two at
// least), and the most splits that keep a decode step of 64 rows within
// one grid of the blocks an SM holds (four where their rings fit, fewer
// where two stages of a wide head do not), 1 to 16.
func TestPagedAttention(t *testing.T) {
	sm90, _ := GPUTarget("sm_90")
	sm80, _ := GPUTarget("sm_80")
	cases := []struct {
		name           string
		gpu            GPU
		hd, kvh        int64
		stages, splits int64
	}{
		{"Phi-3-mini", sm90, 96, 32, 2, 1},  // 132·4 blocks over 64·32 rows: none, one at least
		{"Qwen2.5-0.5B", sm90, 64, 2, 3, 4}, // 528 over 128
		{"head_dim 8", sm90, 8, 1, 4, 8},    // 528 over 64
		{"one kv head of 64 dims", sm80, 64, 1, 2, 6},
		{"Llama 8B", sm90, 128, 8, 2, 1},
		{"head_dim 256", sm90, 256, 4, 2, 1},
		{"Phi-3-mini, sm_80", sm80, 96, 32, 2, 1},
		{"Qwen2.5-0.5B, sm_80", sm80, 64, 2, 2, 3}, // 108·4 over 128
		{"many kv heads", sm90, 64, 128, 3, 1},
	}
	for _, c := range cases {
		p := c.gpu.PagedAttention(c.hd, c.kvh)
		if want := (PagedAttention{c.stages, c.splits}); p != want {
			t.Errorf("%s: %+v, want %+v", c.name, p, want)
		}
		if p.Stages > 2 && p.Stages*PagedAttnStageBytes(c.hd) > c.gpu.PagedAttnSmem {
			t.Errorf("%s: %d stages of %d bytes over the budget of %d", c.name, p.Stages, PagedAttnStageBytes(c.hd), c.gpu.PagedAttnSmem)
		}
	}
}

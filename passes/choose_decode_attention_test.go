package passes

import "testing"

// TestDecodeAttention holds the decode geometry rule to what the attention
// note says of the real models on each target: clusters only for few kv
// heads on sm_90, one stage at head_dim 64 and above (chunks of one round),
// splits bounded by the partials merged through global memory and by the
// keys a step may attend (the context, the window), in whole clusters.
func TestDecodeAttention(t *testing.T) {
	sm90, _ := GPUTarget("sm_90")
	sm80, _ := GPUTarget("sm_80")
	cases := []struct {
		name                          string
		gpu                           GPU
		group, kvh, hd, window, ctx   int64
		splits, cluster, stages, keys int64
	}{
		{"Qwen2.5-0.5B", sm90, 7, 2, 64, 0, 32768, 128, 8, 1, 128},
		{"Qwen2.5-0.5B, sm_80", sm80, 7, 2, 64, 0, 32768, 64, 1, 1, 128},
		{"Qwen2.5-0.5B, 1,000 keys", sm90, 7, 2, 64, 0, 1000, 8, 8, 1, 128},
		{"Qwen2.5-0.5B, 700 keys", sm90, 7, 2, 64, 0, 700, 6, 6, 1, 128},
		{"Phi-3-mini", sm90, 1, 32, 96, 2047, 4096, 8, 8, 1, 128},
		{"gpt-oss full", sm90, 8, 8, 64, 0, 131072, 32, 8, 1, 128},
		{"gpt-oss windowed", sm90, 8, 8, 64, 128, 131072, 1, 1, 1, 128},
		{"head_dim 8", sm90, 2, 4, 8, 0, 0, 64, 8, 3, 384},
		{"context unknown", sm80, 4, 8, 128, 0, 0, 27, 1, 1, 128},
	}
	for _, c := range cases {
		d := c.gpu.DecodeAttention(c.group, c.kvh, c.hd, c.window, c.ctx)
		if want := (DecodeAttention{c.splits, c.cluster, c.stages, c.keys}); d != want {
			t.Errorf("%s: %+v, want %+v", c.name, d, want)
		}
	}
}

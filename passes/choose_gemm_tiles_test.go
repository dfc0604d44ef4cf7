package passes

import "testing"

// TestGEMMTiles holds the GEMM tile rule to the real models' matrices in
// plans of 512-token steps: where today's tiles already give the SMs a
// round of CTAs (the SwiGLUs, Llama's and Phi-3's qkv) they stay, and so
// do 128 × 128 tiles that give 9 in 10 SMs their one CTA (Llama's down and
// o projections, Gemma's qkv: gemmFillsAlone); where they do not (the
// other down projections, whose long K each SM walked one CTA at a time,
// and the narrow o projections and Qwen2.5's qkv), K is split over 128 ×
// 128 tiles, within one round of CTAs and at least gemmMinSplitSteps
// K-steps a split. At 2,048 tokens the grids fill the
// SMs unsplit but for Qwen2.5's 896-row products; an A100's fewer SMs
// leave Llama's 128-tile down unsplit. Every tile takes 4 x stages
// (TestGEMMStages).
func TestGEMMTiles(t *testing.T) {
	sm90, _ := GPUTarget("sm_90")
	sm80, _ := GPUTarget("sm_80")
	cases := []struct {
		name                string
		gpu                 GPU
		maxTokens, rows, in int64
		m, n, splits        int64
	}{
		{"Llama-3.1-8B qkv", sm90, 512, 6144, 4096, 128, 128, 1},
		{"Llama-3.1-8B o", sm90, 512, 4096, 4096, 128, 128, 1},
		{"Llama-3.1-8B gate+up", sm90, 512, 2 * 14336, 4096, 128, 128, 1},
		{"Llama-3.1-8B down", sm90, 512, 4096, 14336, 128, 128, 1},
		{"Gemma-3-4B qkv", sm90, 512, 4096, 2560, 128, 128, 1},
		{"Gemma-3-4B o", sm90, 512, 2560, 2048, 128, 128, 3},
		{"Gemma-3-4B gate", sm90, 512, 10240, 2560, 128, 128, 1},
		{"Gemma-3-4B gate+up", sm90, 512, 2 * 10240, 2560, 128, 128, 1},
		{"Gemma-3-4B down", sm90, 512, 2560, 10240, 128, 128, 3},
		{"Phi-3-mini qkv", sm90, 512, 9216, 3072, 128, 128, 1},
		{"Phi-3-mini o", sm90, 512, 3072, 3072, 128, 128, 2},
		{"Phi-3-mini gate+up", sm90, 512, 2 * 8192, 3072, 128, 128, 1},
		{"Phi-3-mini down", sm90, 512, 3072, 8192, 128, 128, 2},
		{"Qwen2.5-0.5B qkv", sm90, 512, 1152, 896, 128, 128, 3},
		{"Qwen2.5-0.5B o", sm90, 512, 896, 896, 128, 128, 3},
		{"Qwen2.5-0.5B gate+up", sm90, 512, 2 * 4864, 896, 128, 128, 1},
		{"Qwen2.5-0.5B down", sm90, 512, 896, 4864, 128, 128, 7},
		{"Llama-3.1-8B down, 2,048 tokens", sm90, 2048, 4096, 14336, 128, 128, 1},
		{"Phi-3-mini down, 2,048 tokens", sm90, 2048, 3072, 8192, 128, 128, 1},
		{"Qwen2.5-0.5B down, 2,048 tokens", sm90, 2048, 896, 4864, 128, 128, 2},
		{"Llama-3.1-8B down, sm_80", sm80, 512, 4096, 14336, 128, 128, 1},
		{"Phi-3-mini down, sm_80", sm80, 512, 3072, 8192, 128, 128, 2},
		{"a tiny plan's down, 64 tokens", sm90, 64, 256, 768, 64, 128, 3},
		{"a tiny plan's o, 64 tokens", sm90, 64, 256, 256, 64, 64, 1},
	}
	for _, c := range cases {
		got := c.gpu.GEMMTiles(c.maxTokens, c.rows, c.in)
		if want := (GEMMTiles{c.m, c.n, c.splits, 4}); got != want {
			t.Errorf("%s: %+v, want %+v", c.name, got, want)
		}
		if got.Splits == 1 {
			continue
		}
		if ctas := gemmCTAs(got, c.maxTokens, c.rows); ctas > gemmResident*c.gpu.SMs {
			t.Errorf("%s: %d CTAs, more than a round of %d", c.name, ctas, gemmResident*c.gpu.SMs)
		}
		if steps := ceilDiv(c.in, GEMMStep) / got.Splits; steps < gemmMinSplitSteps {
			t.Errorf("%s: %d K-steps a split", c.name, steps)
		}
	}
}

// TestGEMMStages holds the x stages of the GEMMs' ring to the shared
// memory of the CTAs an SM runs: the most up to ir.MaxGEMMStages that fit.
func TestGEMMStages(t *testing.T) {
	sm90, _ := GPUTarget("sm_90")
	sm80, _ := GPUTarget("sm_80")
	cases := []struct {
		gpu          GPU
		m, n, blocks int64
		want         int64
	}{
		{sm90, 128, 128, 2, 4}, // 2 × (110,592 + 1,024) ≤ 233,472
		{sm90, 128, 128, 1, 4},
		{sm80, 128, 128, 2, 2}, // 3 stages: 2 × (92,160 + 1,024) > 167,936
		{sm80, 128, 128, 1, 4},
		{sm80, 64, 128, 2, 4},
		{sm80, 128, 64, 2, 3},
	}
	for _, c := range cases {
		if got := c.gpu.GEMMStages(c.m, c.n, c.blocks); got != c.want {
			t.Errorf("%s %d×%d, %d CTAs an SM: %d stages, want %d", c.gpu.Arch, c.m, c.n, c.blocks, got, c.want)
		}
		if got := c.gpu.GEMMStages(c.m, c.n, c.blocks); got > 2 && c.blocks*(GEMMPipeSmem(c.m, c.n, got)+1024) > c.gpu.SmemPerSM {
			t.Errorf("%s %d×%d: %d stages overflow the SM", c.gpu.Arch, c.m, c.n, got)
		}
	}
}

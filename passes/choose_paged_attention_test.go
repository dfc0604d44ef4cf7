package passes

import "testing"

// TestPagedAttention holds the batched-step attention geometry to what the
// rule says of the real widths: the stages the ring's budget holds (two at
// least), 16 splits at most, and the least key tiles a split that put 16
// rows' kv heads at 512 keys within one grid of the blocks an SM holds
// (four where their rings fit, fewer where two stages of a wide head do
// not), a power of two, 4 at least.
func TestPagedAttention(t *testing.T) {
	sm90, _ := GPUTarget("sm_90")
	sm80, _ := GPUTarget("sm_80")
	cases := []struct {
		name                  string
		gpu                   GPU
		hd, kvh               int64
		stages, splits, tiles int64
	}{
		{"Phi-3-mini", sm90, 96, 32, 2, 16, 8},  // 8·16·32 over 132·4: 7.8
		{"Qwen2.5-0.5B", sm90, 64, 2, 3, 16, 4}, // 0.5: the least
		{"head_dim 8", sm90, 8, 1, 4, 16, 4},
		{"Llama 8B", sm90, 128, 8, 2, 16, 4},           // 1024 over 132·3: 2.6
		{"head_dim 256", sm90, 256, 4, 2, 16, 4},       // 512 over 132·1: 3.9
		{"Phi-3-mini, sm_80", sm80, 96, 32, 2, 16, 16}, // 4096 over 108·3: 12.6
		{"Qwen2.5-0.5B, sm_80", sm80, 64, 2, 2, 16, 4},
		{"many kv heads", sm90, 64, 128, 3, 16, 32}, // 16384 over 528: 31
	}
	for _, c := range cases {
		p := c.gpu.PagedAttention(c.hd, c.kvh)
		if want := (PagedAttention{c.stages, c.splits, c.tiles}); p != want {
			t.Errorf("%s: %+v, want %+v", c.name, p, want)
		}
		if p.Stages > 2 && p.Stages*PagedAttnStageBytes(c.hd, false) > c.gpu.PagedAttnSmem {
			t.Errorf("%s: %d stages of %d bytes over the budget of %d", c.name, p.Stages, PagedAttnStageBytes(c.hd, false), c.gpu.PagedAttnSmem)
		}
	}
}

// TestPagedSplitsWithin: the most splits whose partials fit the budget, a
// power of two, one at least, sixteen at most.
func TestPagedSplitsWithin(t *testing.T) {
	for _, c := range []struct{ tokens, heads, hd, want int64 }{
		{2048, 64, 64, 4},  // gpt-oss-20b: 34.6 MB a split
		{512, 32, 96, 16},  // Phi-3-mini: 6.4 MB
		{512, 14, 64, 16},  // Qwen2.5-0.5B
		{8192, 64, 128, 1}, // 277 MB a split: one
		{2048, 32, 128, 4}, // 34 MB a split: 7.9 fit
	} {
		if got := PagedSplitsWithin(PagedPartsBudget, c.tokens, c.heads, c.hd); got != c.want {
			t.Errorf("%d tokens of %d heads of %d: %d splits, want %d", c.tokens, c.heads, c.hd, got, c.want)
		}
	}
}

// TestPagedKeyTilesSeen: the most key tiles a query spans, by its context
// and its window.
func TestPagedKeyTilesSeen(t *testing.T) {
	for _, c := range []struct{ ctx, window, want int64 }{
		{4096, 0, 64},     // Phi-3-mini-4k: 8 splits of 8
		{4097, 0, 65},     // one key past a tile
		{32768, 128, 3},   // gpt-oss's windows: keys 63..190 span tiles 0..2
		{32768, 2047, 33}, // keys 63..2109 span tiles 0..32
		{64, 4096, 1},     // the context bounds it below the window
		{0, 0, 0},         // neither
		{0, 65, 2},        // 65 keys: 63..127 span tiles 0 and 1
		{0, 66, 3},        // 66: 63..128 span 0 to 2
	} {
		if got := pagedKeyTilesSeen(c.ctx, c.window); got != c.want {
			t.Errorf("ctx %d, window %d: %d key tiles, want %d", c.ctx, c.window, got, c.want)
		}
	}
}

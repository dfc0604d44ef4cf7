package passes

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// TestMoETiles holds the MoE GEMM tile rule to what the MoE note says of
// the real models: 128-slot tiles wherever an expert may get more than 64
// slots a step and its weight type leaves the registers (MXFP4, not
// Qwen3-30B-A3B's K-quants), 128 rows where a full step still fills the SMs twice, 64
// where it does not (a tiny plan), and the most stages two CTAs' shared
// memory allows: on sm_90 4, on sm_80's 164 KiB 2 at 128 × 128, 4 at 64 × 128.
func TestMoETiles(t *testing.T) {
	sm90, _ := GPUTarget("sm_90")
	sm80, _ := GPUTarget("sm_80")
	cases := []struct {
		name                  string
		gpu                   GPU
		maxTokens, e, k, rows int64
		wide                  bool
		m, n, stages          int64
	}{
		{"gpt-oss-20b, 2,048 tokens", sm90, 2048, 32, 4, 2880, true, 128, 128, 4},
		{"gpt-oss-20b, 512 tokens", sm90, 512, 32, 4, 2880, true, 128, 128, 4},
		{"gpt-oss-20b, sm_80", sm80, 2048, 32, 4, 2880, true, 128, 128, 2},
		{"gpt-oss-20b, 64 tokens", sm90, 64, 32, 4, 2880, true, 64, 128, 4},
		{"Qwen3-30B-A3B (K-quants), 2,048 tokens", sm90, 2048, 128, 8, 1536, false, 64, 128, 4},
		{"Qwen3-30B-A3B, sm_80", sm80, 2048, 128, 8, 1536, false, 64, 128, 4},
		{"a tiny plan", sm90, 64, 4, 2, 192, true, 64, 64, 4},
		{"a tiny plan, sm_80", sm80, 64, 4, 2, 192, true, 64, 64, 4},
	}
	for _, c := range cases {
		got := c.gpu.MoETiles(c.maxTokens, c.e, c.k, c.rows, c.wide)
		if want := (MoETiles{c.m, c.n, c.stages}); got != want {
			t.Errorf("%s: %+v, want %+v", c.name, got, want)
		}
		if s := MoEGEMMBlocks * (MoEGEMMSmem(got) + 1024); s > c.gpu.SmemPerSM {
			t.Errorf("%s: %d bytes of shared memory an SM, the SM has %d", c.name, s, c.gpu.SmemPerSM)
		}
	}
}

// TestMoEDownRows: a warp of whole rows (32 lanes a row) takes top_k rows
// up to gpt-oss's 4 (its tuned geometry; gpt-oss-20b-tiny's 2) and
// MoEDownRows past it (Qwen3-30B-A3B's 8); a row set of fewer lanes takes
// one.
func TestMoEDownRows(t *testing.T) {
	for _, c := range []struct{ k, lanes, want int64 }{{1, 32, 1}, {2, 32, 2}, {4, 32, 4}, {8, 32, MoEDownRows}, {8, 4, 1}, {4, 16, 1}} {
		if got := MoEDownRowsOf(c.k, c.lanes); got != c.want {
			t.Errorf("top_k %d, %d lanes a row: %d rows a warp, want %d", c.k, c.lanes, got, c.want)
		}
	}
}

// TestMoEDownLanes: rows of 32 groups or more take whole warps (gpt-oss-20b's
// 2,880 MXFP4 elements: 90 groups); shorter ones the largest power of two
// dividing their groups (Qwen3-30B-A3B's 768 Q4_K or Q6_K elements: 12
// groups of 64, 4 lanes), more where a block's rows would not divide the
// width.
func TestMoEDownLanes(t *testing.T) {
	for _, c := range []struct {
		name    string
		f, d, k int64
		dt      ir.DType
		want    int64
	}{
		{"gpt-oss-20b", 2880, 2880, 4, ir.MXFP4, 32},
		{"Qwen3-30B-A3B Q4_K", 768, 2048, 8, ir.Q4_K, 4},
		{"Qwen3-30B-A3B Q6_K", 768, 2048, 8, ir.Q6_K, 4},
		{"2,048 Q4_K elements", 2048, 2048, 8, ir.Q4_K, 32},
		{"odd groups", 192, 256, 4, ir.Q4_K, 1},
		{"a narrow width", 192, 32, 4, ir.Q4_K, 2},
	} {
		got := MoEDownLanesOf(c.f, c.d, c.k, c.dt)
		if got != c.want {
			t.Errorf("%s: %d lanes a row, want %d", c.name, got, c.want)
		}
		if o := MoEWarps / c.k * MoEDownRowsOf(c.k, got) * 32 / got; c.d%o != 0 {
			t.Errorf("%s: blocks of %d rows do not divide width %d", c.name, o, c.d)
		}
	}
}

package passes

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// TestIntLanes checks the lane-set sizes of the real shapes on sm_90: the
// power of two ≥ the row's groups, narrower only where that idles fewer
// lanes and the grid keeps manyWaves of blocks, or the groups in whole
// 16-lane segments where that fits more sets and puts no more rows on the
// busiest SM.
func TestIntLanes(t *testing.T) {
	for _, c := range []struct {
		name    string
		dt      ir.DType
		in, out int64
		s       int64
	}{
		{"gpt-oss LM head (90 groups, 201088 rows)", ir.Q8_0, 2880, 201088, 32},
		{"gpt-oss qkv (90 groups, 5120 rows: too few blocks at 32)", ir.Q8_0, 2880, 5120, 128},
		{"gpt-oss o-proj (128 groups)", ir.Q8_0, 4096, 2880, 128},
		{"Qwen down (76 groups, 896 rows: 12 rows on the busiest SM at 80, 8 at 128)", ir.Q4_K, 4864, 896, 128},
		{"Qwen LM head (28 groups)", ir.Q8_0, 896, 151936, 32},
		{"Phi-3 LM head (48 groups: sets of 48 put 260 rows on the busiest SM, of 64 256)", ir.Q6_K, 3072, 32064, 64},
		{"Phi-3 o-proj (48 groups, 3072 rows: 40 rows on the busiest SM at 48, 32 at 64)", ir.Q4_K, 3072, 3072, 64},
		{"Phi-3 gate+up (48 groups, 16384 rows: 140 rows against 128)", ir.Q4_K, 3072, 16384, 64},
		{"Phi-3 qkv (48 groups, 9216 rows: 80 rows either way, five sets of 48)", ir.Q5_K, 3072, 9216, 48},
		{"Llama down (172 groups, 4096 rows)", ir.Q4_K, 11008, 4096, 256},
	} {
		s, sets := gpus["sm_90"].IntLanes(c.dt, c.in, c.out)
		if s != c.s || sets != LinThreads/c.s {
			t.Errorf("%s: S %d, %d sets; want S %d", c.name, s, sets, c.s)
		}
	}
}

// tuningWeight is a weight node [out, in] of dtype dt in layout ("": GGUF
// order).
func tuningWeight(dt ir.DType, layout string, out, in int64) *ir.Node {
	attrs := map[string]any{"name": "w"}
	if layout != "" {
		attrs["layout"] = layout
	}
	return &ir.Node{Op: ir.OpWeight, DType: dt, Shape: ir.Shape{out, in}, Attrs: attrs}
}

// TestMMAWarps checks which weights the tensor-core kernels take and their
// warps: one layout with MmaCodes (Q4_K, Q5_K in its GPU layout), whole
// super-blocks that at most 8 warps share alike, the fewest super-blocks a
// warp.
func TestMMAWarps(t *testing.T) {
	w := tuningWeight
	q4k := func(out, in int64) *ir.Node { return w(ir.Q4_K, "gpu_q4_k", out, in) }
	for _, c := range []struct {
		name    string
		ga, ua  *ir.Node
		in      int64
		nw, upw int64
		ok      bool
	}{
		{"Phi-3-mini (12 super-blocks)", q4k(8192, 3072), q4k(8192, 3072), 3072, 6, 2, true},
		{"Llama-2-7B (16)", q4k(11008, 4096), q4k(11008, 4096), 4096, 8, 2, true},
		{"Llama-3-8B-sized (16, 14336 columns)", q4k(14336, 4096), q4k(14336, 4096), 4096, 8, 2, true},
		{"Qwen2.5-0.5B (896: not whole super-blocks)", q4k(4864, 896), q4k(4864, 896), 896, 0, 0, false},
		{"Q5_K in its GPU layout", w(ir.Q5_K, "gpu_q5_k", 8192, 3072), w(ir.Q5_K, "gpu_q5_k", 8192, 3072), 3072, 6, 2, true},
		{"Q5_K in GGUF order (no MmaCodes)", w(ir.Q5_K, "", 8192, 3072), w(ir.Q5_K, "", 8192, 3072), 3072, 0, 0, false},
		{"gate and up in different types", q4k(8192, 3072), w(ir.Q6_K, "gpu_q6_k", 8192, 3072), 3072, 0, 0, false},
		{"27 super-blocks: 9 warps of 3 is too many", q4k(8, 6912), q4k(8, 6912), 6912, 0, 0, false},
	} {
		nw, upw, ok := MMAWarps(c.ga, c.ua, c.in)
		if nw != c.nw || upw != c.upw || ok != c.ok {
			t.Errorf("%s: MMAWarps = %d, %d, %v; want %d, %d, %v", c.name, nw, upw, ok, c.nw, c.upw, c.ok)
		}
	}
}

// TestMMATokensStreams checks the streamed mma_tokens kernels' chunks and
// stages at the real shapes on sm_90: the longest K-slab whose stage of 16
// rows fits mmatStageTarget, activations staged where they fit beside two
// stages (one block an SM), else two blocks an SM; layouts without
// sections and rows of no whole super-blocks do not stream.
func TestMMATokensStreams(t *testing.T) {
	w, gpu := tuningWeight, gpus["sm_90"]
	for _, c := range []struct {
		name   string
		w      *ir.Node
		tiles  int64
		stageX bool
		want   MMATokensStream
	}{
		// Q4_K, 6 super-blocks a slab: 16 rows of 864 + 16 bytes.
		{"Phi-3 gate+up", w(ir.Q4_K, "gpu_q4_k", 16384, 3072), 1024, true, MMATokensStream{Slab: 1536, Smem: 4 * 14080, XSmem: 110592, PerSM: 1, Blocks: 132}},
		{"Phi-3 o-proj, activations read", w(ir.Q4_K, "gpu_q4_k", 3072, 3072), 192, false, MMATokensStream{Slab: 1536, Smem: 4 * 14080, PerSM: 2, Blocks: 192}},
		// Q5_K split: 16 rows of (768 + 16) + (192 + 16) + (96 + 16).
		{"Phi-3 qkv", w(ir.Q5_K, "gpu_q5_k", 9216, 3072), 576, true, MMATokensStream{Slab: 1536, Smem: 4 * 17664, XSmem: 110592, PerSM: 1, Blocks: 132}},
		// Q6_K split, 4 super-blocks: 16 rows of (768 + 16) + (64 + 16) + (16 + 16).
		{"Phi-3 down", w(ir.Q6_K, "gpu_q6_k", 3072, 8192), 192, false, MMATokensStream{Slab: 1024, Smem: 4 * 14336, PerSM: 2, Blocks: 192}},
		{"Phi-3 down, activations staged (16 × 8192 codes: too many)", w(ir.Q6_K, "gpu_q6_k", 3072, 8192), 192, true, MMATokensStream{}},
	} {
		slab := MMATokensSlab(c.w, c.w.Shape[1])
		got, ok := gpu.MMATokensStreams(c.w, c.w.Shape[1], c.tiles, slab, c.stageX)
		if got != c.want || ok != (c.want != MMATokensStream{}) {
			t.Errorf("%s: slab %d, %+v, %v; want %+v", c.name, slab, got, ok, c.want)
		}
	}
	for _, c := range []struct {
		name string
		w    *ir.Node
	}{
		{"Q5_K in GGUF order", w(ir.Q5_K, "", 9216, 3072)},
		{"Q5_0 (no sections)", w(ir.Q5_0, "gpu_q5_0", 4864, 896)},
		{"Qwen qkv-shaped Q4_K (896: no whole super-blocks)", w(ir.Q4_K, "gpu_q4_k", 1152, 896)},
	} {
		if slab := MMATokensSlab(c.w, c.w.Shape[1]); slab != 0 {
			t.Errorf("%s: slab %d, want none", c.name, slab)
		}
	}
}

// TestLinearSlabs checks which decode linears stream in K-slabs on the
// tensor cores (linear_mmas) on sm_90, and their geometry: 8 warps where a
// block then has at least linearSlabsPerBlock slabs, in at most 3 stages
// (more lost on an H200) and the block's slabs; the integer path kept
// where a block would have too few slabs (the o-projs of 16, 12 and 8
// super-blocks a row), rows are not whole super-blocks (Qwen2.5-0.5B's
// 896), or the weights have no MmaCodes.
func TestLinearSlabs(t *testing.T) {
	w := tuningWeight
	for _, c := range []struct {
		name            string
		w               *ir.Node
		nw, stages, blk int64
		ok              bool
	}{
		{"Llama-3.1-8B down Q4_K (56 super-blocks: 7 slabs a block)", w(ir.Q4_K, "gpu_q4_k", 4096, 14336), 8, 3, 256, true},
		{"Llama-3.1-8B down Q6_K", w(ir.Q6_K, "gpu_q6_k", 4096, 14336), 8, 3, 256, true},
		{"Qwen3-8B down Q5_K", w(ir.Q5_K, "gpu_q5_k", 4096, 12288), 8, 3, 256, true},
		{"Qwen3-8B down Q4_K (48 super-blocks: 6 slabs a block)", w(ir.Q4_K, "gpu_q4_k", 4096, 12288), 8, 3, 256, true},
		{"Gemma-3-4B down Q4_K (160 tiles: 5 slabs a block)", w(ir.Q4_K, "gpu_q4_k", 2560, 10240), 0, 0, 0, false},
		{"Phi-3 down Q6_K (32 super-blocks: 4 slabs a block)", w(ir.Q6_K, "gpu_q6_k", 3072, 8192), 0, 0, 0, false},
		{"Llama-3.1-8B o-proj Q4_K (2 slabs a block)", w(ir.Q4_K, "gpu_q4_k", 4096, 4096), 0, 0, 0, false},
		{"Phi-3 o-proj (12 super-blocks)", w(ir.Q4_K, "gpu_q4_k", 3072, 3072), 0, 0, 0, false},
		{"Gemma-3-4B o-proj (8 super-blocks)", w(ir.Q4_K, "gpu_q4_k", 2560, 2048), 0, 0, 0, false},
		{"Qwen2.5-0.5B down (896 rows of 4864: 19 super-blocks)", w(ir.Q4_K, "gpu_q4_k", 896, 4864), 0, 0, 0, false},
		{"Q5_K in GGUF order (no MmaCodes)", w(ir.Q5_K, "", 4096, 14336), 0, 0, 0, false},
		{"Q8_0 (no MmaCodes)", w(ir.Q8_0, "", 4096, 14336), 0, 0, 0, false},
		{"rows not whole 16-row tiles", w(ir.Q4_K, "gpu_q4_k", 4100, 14336), 0, 0, 0, false},
	} {
		ls, ok := gpus["sm_90"].LinearSlabs(c.w, c.w.Shape[1], c.w.Shape[0])
		if ok != c.ok || ok && (ls.NW != c.nw || ls.Stages != c.stages || ls.Blocks != c.blk || ls.Smem != ls.Stages*ls.Stage) {
			t.Errorf("%s: %+v, %v; want %d warps, %d stages, %d blocks, %v", c.name, ls, ok, c.nw, c.stages, c.blk, c.ok)
		}
	}
}

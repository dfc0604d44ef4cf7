package cuda

import (
	"testing"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
)

// h100 is the tuning of sm_90 plans: an H100's or H200's 132 SMs.
var h100 = func() tuning {
	g, err := passes.GPUTarget("sm_90")
	if err != nil {
		panic(err)
	}
	return tuning{g}
}()

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
		s, sets := h100.intLanes(c.dt, c.in, c.out)
		if s != c.s || sets != linThreads/c.s {
			t.Errorf("%s: S %d, %d sets; want S %d", c.name, s, sets, c.s)
		}
	}
}

// TestMMAWarps checks which weights the tensor-core kernels take and their
// warps: one layout with MmaCodes (Q4_K, Q5_K split), whole super-blocks
// that at most 8 warps share alike, the fewest super-blocks a warp.
func TestMMAWarps(t *testing.T) {
	for _, c := range []struct {
		name    string
		ga, ua  accessor
		in      int64
		nw, upw int64
		ok      bool
	}{
		{"Phi-3-mini (12 super-blocks)", accessor{dtype: ir.Q4_K, blocks: 196608}, accessor{dtype: ir.Q4_K, blocks: 196608}, 3072, 6, 2, true},
		{"Llama-2-7B (16)", accessor{dtype: ir.Q4_K, blocks: 176128}, accessor{dtype: ir.Q4_K, blocks: 176128}, 4096, 8, 2, true},
		{"Llama-3-8B-sized (16, 14336 columns)", accessor{dtype: ir.Q4_K, blocks: 229376}, accessor{dtype: ir.Q4_K, blocks: 229376}, 4096, 8, 2, true},
		{"Qwen2.5-0.5B (896: not whole super-blocks)", accessor{dtype: ir.Q4_K, blocks: 3500}, accessor{dtype: ir.Q4_K, blocks: 3500}, 896, 0, 0, false},
		{"Q5_K split", accessor{dtype: ir.Q5_K, split: true, blocks: 196608}, accessor{dtype: ir.Q5_K, split: true, blocks: 196608}, 3072, 6, 2, true},
		{"Q5_K in GGUF order (no MmaCodes)", accessor{dtype: ir.Q5_K, blocks: 196608}, accessor{dtype: ir.Q5_K, blocks: 196608}, 3072, 0, 0, false},
		{"gate and up in different layouts", accessor{dtype: ir.Q4_K, blocks: 196608}, accessor{dtype: ir.Q6_K, split: true, blocks: 196608}, 3072, 0, 0, false},
		{"27 super-blocks: 9 warps of 3 is too many", accessor{dtype: ir.Q4_K, blocks: 9}, accessor{dtype: ir.Q4_K, blocks: 9}, 6912, 0, 0, false},
	} {
		nw, upw, ok := mmaWarps(c.ga, c.ua, c.in)
		if nw != c.nw || upw != c.upw || ok != c.ok {
			t.Errorf("%s: mmaWarps = %d, %d, %v; want %d, %d, %v", c.name, nw, upw, ok, c.nw, c.upw, c.ok)
		}
	}
}

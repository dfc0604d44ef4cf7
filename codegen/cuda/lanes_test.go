package cuda

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// TestIntLanes checks the lane-set sizes of the real shapes: the power of two
// ≥ the row's groups, narrower only where that idles fewer lanes and the grid
// keeps manyWaves of blocks, or the groups in whole 16-lane segments where
// that fits more sets and puts no more rows on the busiest SM.
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
		s, sets := intLanes(c.dt, c.in, c.out)
		if s != c.s || sets != linThreads/c.s {
			t.Errorf("%s: S %d, %d sets; want S %d", c.name, s, sets, c.s)
		}
	}
}

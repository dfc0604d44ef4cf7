package cuda

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// TestIntLanes checks the lane-set sizes of the real shapes: the power of two
// ≥ the row's groups, narrower only where that idles fewer lanes and the grid
// keeps manyWaves of blocks, or the groups in whole 16-lane segments where
// that fits more sets and the blocks cover the SMs.
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
		{"Qwen down (76 groups, 896 rows: sets of 80 leave SMs without a block)", ir.Q4_K, 4864, 896, 128},
		{"Qwen LM head (28 groups)", ir.Q8_0, 896, 151936, 32},
		{"Phi-3 LM head (48 groups: five sets of 48 lanes, not four of 64)", ir.Q6_K, 3072, 32064, 48},
		{"Phi-3 o-proj (48 groups, 3072 rows: 154 blocks of five sets)", ir.Q4_K, 3072, 3072, 48},
		{"Llama down (172 groups, 4096 rows)", ir.Q4_K, 11008, 4096, 256},
	} {
		s, sets := intLanes(c.dt, c.in, c.out)
		if s != c.s || sets != linThreads/c.s {
			t.Errorf("%s: S %d, %d sets; want S %d", c.name, s, sets, c.s)
		}
	}
}

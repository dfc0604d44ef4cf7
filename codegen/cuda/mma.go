package cuda

import (
	"github.com/llama-orch/orc/ir"
)

// mmaShape is how a tensor-core kernel (mma.cu.tmpl) runs, where ok: its
// warps, the super-blocks a warp, and its stream.
type mmaShape struct {
	nw, upw int64
	st      stream
	ok      bool
}

// mmaChunk is swiglu_mma's chunk (mma.cu.tmpl): 8 columns, whose gate and
// up rows are one m16n8k32 tile's 16.
const mmaChunk = 8

// mmaWarps reports whether weights with accessors ga, ua over rows of in
// take the tensor-core kernels (swiglu_mma, qkv_mma): one layout with
// MmaCodes, whole super-blocks that at most 8 warps share alike, at most 3
// a warp (their activations' B words stay in registers); and the warps and
// super-blocks a warp, the fewest a warp.
func mmaWarps(ga, ua accessor, in int64) (nw, upw int64, ok bool) {
	if ga != ua || !mmaLayout(ga) || in%256 != 0 {
		return 0, 0, false
	}
	for nb, upw := in/256, int64(1); upw <= 3; upw++ {
		if nb%upw == 0 && nb/upw <= 8 {
			return nb / upw, upw, true
		}
	}
	return 0, 0, false
}

// mmaLayout reports whether accessor acc has MmaCodes (mma.cu.tmpl).
func mmaLayout(acc accessor) bool {
	return acc.dtype == ir.Q4_K && !acc.split || acc.dtype == ir.Q5_K && acc.split
}

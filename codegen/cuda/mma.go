package cuda

import (
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
)

// mmaShape is how a tensor-core kernel (mma.cu.tmpl) runs, as the
// chooseKernels pass recorded it: its warps, the super-blocks a warp, and
// its stream.
type mmaShape struct {
	nw, upw int64
	st      passes.Stream
}

// mmaShapeOf is tensor-core node n's recorded shape.
func mmaShapeOf(n *ir.Node) mmaShape {
	return mmaShape{n.Int("mma_warps"), n.Int("mma_upw"), passes.Stream{Smem: n.Int("stream_smem"), Blocks: n.Int("stream_blocks")}}
}

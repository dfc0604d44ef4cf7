package cuda

import (
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// The tensor-core products of a few tokens (mma_tokens.cu.tmpl): linear,
// swiglu_linear and qkv nodes whose kernel in the schedule being emitted is
// mma_tokens (chooseKernels' batch_decode_kernel or batch_kernel). A block
// is mmaTokensWarps warps over one tile of 16 weight rows and
// mmaTokenTiles n-tiles of 8 tokens; more tokens take more blocks of the
// tile (grid y).

// mmaTokensMaxTiles bounds a block's n-tiles: 16 tokens, the batched
// decode steps the targets run most (Phi-3-mini's 16 sequences); more
// tokens take more blocks of the tile, which run together (mmat_block).
// Eight n-tiles (64 tokens a block) took Phi-3-mini's Q6_K head to 166
// registers (nvcc 11.8, sm_90), one block of 8 warps an SM.
const mmaTokensMaxTiles = 2

// mmaTokenTiles is the n-tiles a block takes: mmaTokensMaxTiles, fewer
// where the plan's steps have fewer tokens.
func (e *emitter) mmaTokenTiles() int64 { return min(mmaTokensMaxTiles, ceilDiv(e.maxTokens, 8)) }

// mmaTokensWarps is the warps a block splits the groups of a row of in
// elements of dtype dt over: 8, fewer where the row has fewer groups.
func mmaTokensWarps(dt ir.DType, in int64) int64 {
	return min(8, in/passes.IntDotGroups[dt])
}

// mmaTokens emits mma_tokens kernel fn over x [T, in] writing y (its
// weight and bias parameters already in c) for blocks tiles of 16 weight
// rows of dtype dt: x's int16 codes first (after a quantize_x8 launch where
// no producer wrote them).
func (e *emitter) mmaTokens(c *call, y, x *ir.Node, dt ir.DType, in int64, fn string, blocks int64, targs func(nw, nt, rows int64) any) ([]plans.Launch, error) {
	quant, err := e.quantizedX(c, x, in)
	if err != nil {
		return nil, err
	}
	c.ptr(e, cOut, "y", y)
	e.stateArg(c)
	ls, err := e.mmaTokensLaunch(c, x, dt, in, fn, blocks, targs)
	return append(quant, ls...), err
}

// mmaTokensLaunch is the launch of mma_tokens kernel fn whose parameters
// are in c, over x [T, in] with weights of dtype dt, for blocks tiles;
// targs takes the warps, the n-tiles and the rows.
func (e *emitter) mmaTokensLaunch(c *call, x *ir.Node, dt ir.DType, in int64, fn string, blocks int64, targs func(nw, nt, rows int64) any) ([]plans.Launch, error) {
	nw, nt := mmaTokensWarps(dt, in), e.mmaTokenTiles()
	return e.emit(c, fn, int(nw*32), gridTokenTiles(blocks, rowsOf(x), 8*nt), targs(nw, nt, rowsOf(x)))
}

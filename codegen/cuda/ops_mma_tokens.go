package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// The tensor-core products of a few tokens (mma_tokens.cu.tmpl): linear,
// swiglu_linear and qkv nodes whose kernel in the schedule being emitted is
// mma_tokens (chooseKernels' batch_decode_kernel or batch_kernel). A block
// is mmaTokensWarps warps over one tile of 16 weight rows and
// mmaTokenTiles n-tiles of 8 tokens; more tokens take more blocks of the
// tile (grid y). A node recording mmat_slab takes the streamed form
// (fn_stream): a grid row of passes.MMATokensStream's blocks walks the
// tiles through shared-memory stages.

// mmaTokenTiles is the n-tiles a block takes: passes.MMATokensMaxTiles,
// fewer where the plan's steps have fewer tokens.
func (e *emitter) mmaTokenTiles() int64 {
	return min(passes.MMATokensMaxTiles, ceilDiv(e.maxTokens, 8))
}

// mmaTokensWarps is the warps a block splits the groups of a row of in
// elements of dtype dt over: 8, fewer where the row has fewer groups.
func mmaTokensWarps(dt ir.DType, in int64) int64 {
	return min(8, in/passes.IntDotGroups[dt])
}

// mmatStream is the streamed form's template arguments after its
// one-round kernel's: the K-slab, whether its activations are staged, the
// stages' bytes. A zero mmatStream is the one-round kernel.
type mmatStream struct {
	KSL  int64
	XS   bool
	Smem int64
}

// mmatArgs gives a kernel's template arguments for nw warps, nt n-tiles,
// rows rows (0: T) and its stream.
type mmatArgs func(nw, nt, rows int64, st mmatStream) any

// mmaTokens emits mma_tokens kernel fn of node n over x [T, in] writing y
// (its weight and bias parameters already in c) for blocks tiles of 16
// weight rows w: x's int16 codes first (after a quantize_x8 launch where
// no producer wrote them).
func (e *emitter) mmaTokens(c *call, n, y, x, w *ir.Node, in int64, fn string, blocks int64, targs mmatArgs) ([]plans.Launch, error) {
	quant, err := e.quantizedX(c, x, in)
	if err != nil {
		return nil, err
	}
	c.ptr(e, cOut, "y", y)
	e.stateArg(c)
	ls, err := e.mmaTokensLaunch(c, n, x, w, in, fn, blocks, targs)
	return append(quant, ls...), err
}

// mmaTokensLaunch is the launch of mma_tokens kernel fn of node n whose
// parameters are in c, over x [T, in] with weights w, for blocks tiles.
func (e *emitter) mmaTokensLaunch(c *call, n, x, w *ir.Node, in int64, fn string, blocks int64, targs mmatArgs) ([]plans.Launch, error) {
	nw, nt, rows := mmaTokensWarps(w.DType, in), e.mmaTokenTiles(), rowsOf(x)
	slab := n.Int("mmat_slab")
	if slab == 0 {
		return e.emit(c, fn, int(nw*32), gridTokenTiles(blocks, rows, 8*nt), targs(nw, nt, rows, mmatStream{}))
	}
	st, ok := e.MMATokensStreams(w, in, blocks, slab, n.Bool("mmat_stage_x"))
	if !ok {
		return nil, fmt.Errorf("%s %%%d records mmat_slab %d (mmat_stage_x %v), but its %d tiles of weight %q [%v %s, rows of %d] do not stream so: run chooseKernels", n.Op, n.ID, slab, n.Bool("mmat_stage_x"), blocks, w.Str("name"), w.DType, w.Str("layout"), in)
	}
	ms := mmatStream{KSL: st.Slab, XS: st.XSmem > 0, Smem: st.Smem}
	ls, err := e.emitBounded(c, fn+"_stream", int(nw*32), int(st.PerSM), gridTokenTiles(st.Blocks, rows, 8*nt), targs(nw, nt, rows, ms))
	if err == nil && ms.XS {
		st.Smem += in / 32 * 8 * nt * (64 + 8) // MmatXS's BYTES for the kernel's tokens
	}
	return stream{Smem: st.Smem}.launch(ls, err)
}

// The f16 tensor-core products of a few tokens (mma_halves.cu.tmpl):
// linear, swiglu_linear and qkv nodes whose kernel in the schedule being
// emitted is mma_halves (chooseKernels' batch_decode_kernel). They read
// the f32 activation itself (no quantize launch) and run in thread-block
// clusters of the recorded shape (mmah_cluster, mmah_warps,
// mmah_x_halves, mmah_clusters): a grid row of clusters·cluster blocks,
// more tokens than a block's n-tiles take more rows (grid y), each block's
// dynamic shared memory its range of the activations and its warps' sums
// (passes.MMAHalvesSmem).

// mmahShape is an mma_halves kernel's template arguments after its
// weights' and widths': cluster, warps, the activations' f16 halves,
// n-tiles and rows (0: T).
type mmahShape struct{ C, NW, XH, NT, Rows int64 }

// mmaHalvesRows is mmaHalves for a kernel whose parameters after its
// weights' and biases' (in c) are x, y (node n's output) and the state.
func (e *emitter) mmaHalvesRows(c *call, n, x *ir.Node, in int64, fn string, tiles int64, targs func(mmahShape) any) ([]plans.Launch, error) {
	c.ptr(e, cIn, "x", x)
	c.ptr(e, cOut, "y", n)
	e.stateArg(c)
	return e.mmaHalves(c, n, x, in, fn, tiles, targs)
}

// mmaHalves emits mma_halves kernel fn of node n over x [T, in] (f32) for
// tiles tiles of 16 weight rows, its parameters in c.
func (e *emitter) mmaHalves(c *call, n, x *ir.Node, in int64, fn string, tiles int64, targs func(mmahShape) any) ([]plans.Launch, error) {
	cl, nw, xh, ncl := n.Int("mmah_cluster"), n.Int("mmah_warps"), n.Int("mmah_x_halves"), n.Int("mmah_clusters")
	if cl <= 0 || nw <= 0 || xh < 1 || xh > 2 || ncl <= 0 || in%(256*cl) != 0 || ncl > ceilDiv(tiles, nw) {
		return nil, fmt.Errorf("%s %%%d records mma_halves clusters of %d blocks of %d warps, x in %d halves, %d of them, which its %d tiles of rows of %d do not take: run chooseKernels", n.Op, n.ID, cl, nw, xh, ncl, tiles, in)
	}
	nt := e.mmaTokenTiles()
	c.cluster = cl
	perSM := int(min(ir.MMAHBlocks, ceilDiv(ncl*cl, e.SMs)))
	ls, err := e.emitBounded(c, fn, int(nw*32), perSM, gridTokenTiles(ncl*cl, rowsOf(x), 8*nt), targs(mmahShape{C: cl, NW: nw, XH: xh, NT: nt, Rows: rowsOf(x)}))
	return stream{Smem: passes.MMAHalvesSmem(in/256/cl, nt, nw, xh)}.launch(ls, err)
}

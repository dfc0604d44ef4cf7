package passes

import "github.com/llama-orch/orc/ir"

// The GPU kernels' tuned shapes (templates in codegen/cuda), which
// chooseKernels decides by and codegen sizes launches by.

// IntDotGroups are the weight dtypes with an integer dot (q8_dot.cu.tmpl),
// by their accessors' GROUP: their matrix kernels read activations
// quantized to int16.
var IntDotGroups = map[ir.DType]int64{ir.Q4_0: 32, ir.Q5_0: 32, ir.Q8_0: 32, ir.MXFP4: 32, ir.Q4_K: 64, ir.Q5_K: 64, ir.Q6_K: 64}

// LinThreads is the block of linear_gemv, linear_q8 and a swiglu_q8 that
// does not quantize its output: LIN_WARPS (gemv.cu.tmpl) warps.
const LinThreads = 8 * 32

// A swiglu_q8 that quantizes its output has SwiGLUQ8Sets lane sets of two
// columns, so that a block's columns are one 32-group, and so S·16 threads:
// Qwen2.5-0.5B's (S = 32) 512. Sets of 4 columns in blocks of 256 threads
// (half the blocks, each thread twice the rows) made its decode 3 % slower,
// and Phi-3-mini's (S 64 → 32, 2 groups a lane) 7 %; Phi-3-mini's S = 64
// in 1024 threads (64 registers a thread, spills) 28 %.
const (
	SwiGLUQ8Sets     = 16
	MaxSwiGLUThreads = 512
)

// PrefillTile is how many tokens one block of the integer-path kernels
// serves in a prefill: each weight group fetched is used that many times.
const PrefillTile = 8

// BatchDecodeRows bounds the rows of a batched step of decode tokens alone
// that the batched decode schedule (batch_decode_kernel) serves: all the
// rows a batched step takes (codegen/cuda's batchMaxRows). Its tensor-core
// kernels (mma_tokens) take 16 rows a block, the blocks of one weight tile
// run together and read it from DRAM once; the prefill's GEMMs, tiled for
// hundreds of rows, launch out/128 latency-bound blocks at 64 (Qwen2.5-0.5B's
// head: 180 µs for 145 MB on an H200).
const BatchDecodeRows = 64

// MMATokenTypes are the weight dtypes with tensor-core fragments for a few
// tokens (mma_tokens.cu.tmpl's MmaT, in GGUF order and their GPU layout).
var MMATokenTypes = map[ir.DType]bool{ir.Q4_0: true, ir.Q5_0: true, ir.Q8_0: true, ir.Q4_K: true, ir.Q5_K: true, ir.Q6_K: true}

// MMATokensMaxTiles bounds the n-tiles of 8 tokens an mma_tokens block
// takes: 16 tokens, the batched decode steps the targets run most
// (Phi-3-mini's 16 sequences); more tokens take more blocks of the tile.
// Eight n-tiles (64 tokens a block) took Phi-3-mini's Q6_K head to 166
// registers (nvcc 11.8, sm_90), one block of 8 warps an SM.
const MMATokensMaxTiles = 2

// MMATokensStream is how a streamed mma_tokens kernel (mma_tokens.cu.tmpl,
// mmat_stream) walks its weight tiles of 16 rows: chunks of Slab elements
// of a row (a K-slab of whole super-blocks), Smem bytes of stages, XSmem
// bytes of activations staged in shared memory (0: read from global
// memory), PerSM blocks an SM, Blocks a row of the grid.
type MMATokensStream struct{ Slab, Smem, XSmem, PerSM, Blocks int64 }

// The stream's sizes: a stage of at most mmatStageTarget bytes (smaller
// chunks pipeline deeper; each costs the block two barriers), at most
// mmatMaxStages of them, and the kernel's static shared memory (each warp's
// sums of a tile, two tiles' worth) with the 1 KB an SM reserves per block.
const (
	mmatStageTarget = 24 << 10
	mmatMaxStages   = 4
	mmatStatic      = 2*8*16*8*MMATokensMaxTiles*4 + 1<<10
)

// mmatStageBytes is mma_tokens.cu.tmpl's mmat_stage_bytes: 16 rows of each
// section (units: its bytes a 256-element block), each padded to 16 bytes
// and 16 more.
func mmatStageBytes(units []int64, slab int64) int64 {
	var b int64
	for _, u := range units {
		b += 16 * ((slab/256*u+15)/16 + 1) * 16
	}
	return b
}

// MMATokensSlab is the K-slab a streamed mma_tokens kernel over weight
// w's rows of in elements copies a chunk of (0: it cannot stream): the
// layouts stream_rows streams (streamUnits), rows of whole super-blocks,
// the longest slab (whole super-blocks dividing the row, a group a warp at
// least) whose stage fits mmatStageTarget, else the shortest.
func MMATokensSlab(w *ir.Node, in int64) int64 {
	units, ok := streamUnits[w.DType]
	if !ok || w.DType != ir.Q4_K && !layoutOf(w).laidOut() || in%256 != 0 {
		return 0
	}
	nb, slab := in/256, int64(0)
	for ks := int64(1); ks <= nb; ks++ {
		if s := in / ks; nb%ks == 0 && s/IntDotGroups[w.DType] >= 8 {
			if slab = s; mmatStageBytes(units, s) <= mmatStageTarget {
				break
			}
		}
	}
	return slab
}

// MMATokensStreams sizes the stream of an mma_tokens kernel over weight
// w's rows of in elements in tiles tiles of 16 rows, chunks of slab
// elements, its activations staged (stageX) or not: the stages fill what
// two blocks an SM leave, else one; staged activations (16 tokens × in
// int16 codes, pre-split, and their scales) leave room for one block.
func (g GPU) MMATokensStreams(w *ir.Node, in, tiles, slab int64, stageX bool) (MMATokensStream, bool) {
	units, ok := streamUnits[w.DType]
	if !ok || w.DType != ir.Q4_K && !layoutOf(w).laidOut() || slab <= 0 || slab%256 != 0 || in%slab != 0 || tiles <= 0 {
		return MMATokensStream{}, false
	}
	stage := mmatStageBytes(units, slab)
	var x int64
	if stageX {
		x = in / 32 * 8 * MMATokensMaxTiles * (64 + 8)
	}
	for perSM := int64(2); perSM >= 1; perSM-- {
		if stages := min(mmatMaxStages, (g.SmemPerSM/perSM-mmatStatic-x)/stage); stages >= 2 {
			return MMATokensStream{Slab: slab, Smem: stages * stage, XSmem: x, PerSM: perSM, Blocks: min(tiles, perSM*g.SMs)}, true
		}
	}
	return MMATokensStream{}, false
}

// MMATokenTiles is the weight tiles of 16 rows of an mma_tokens kernel of
// matrix node n (mma_tokens.cu.tmpl): 16 rows of a linear, 8 columns' gate
// and up rows of a SwiGLU, 8 rotation pairs of one qkv part.
func MMATokenTiles(n *ir.Node) int64 {
	out := n.Shape[len(n.Shape)-1]
	switch n.Op {
	case ir.OpSwiGLULinear:
		return ceilDiv(out, 8)
	case ir.OpQKV:
		var t int64
		for _, p := range n.Ints("parts") {
			t += ceilDiv(p/2, 8)
		}
		return t
	}
	return ceilDiv(out, 16)
}

// MoEWarps is MOE_WARPS (moe.cu.tmpl): the rows one expert-GEMV block owns.
const MoEWarps = 8

// MMAChunk is swiglu_mma's chunk (mma.cu.tmpl): 8 columns, whose gate and
// up rows are one m16n8k32 tile's 16.
const MMAChunk = 8

// TokenTile is the tokens per block of the integer-path kernels over x's
// rows: PrefillTile in a prefill, 1 in decode or for fixed-row inputs.
func TokenTile(x *ir.Node, prefill bool) int64 {
	if prefill && len(x.Shape) > 0 && x.Shape[0] == ir.T {
		return PrefillTile
	}
	return 1
}

// IntLanes is the lane-set size S of the integer-path kernels for rows of
// in elements of dtype dt (q8_rows.cu.tmpl, rows_dot8), and the sets per
// block: the smallest power of two ≥ the row's groups, from a warp to the
// whole block, or a narrower set that leaves fewer lanes idle (a lane takes
// groups j, j + S, ...) where out rows, 4 a set, still make manyWaves of
// blocks: gpt-oss's 90-group Q8_0 rows kept 38 of 128 lanes idle. Widening
// the sets of small decode launches to give every SM a block was measured
// no faster. Last, the row's groups rounded up to whole 16-lane segments
// where that fits more sets in a block and the busiest SM's rows
// (rowsPerSM) do not grow: Phi-3's qkv (48-group rows, 9216 of them), five
// sets of 48 lanes instead of four of 64, took 1.9 % off its decode step on
// an H200 (none on an H100); its SwiGLU, o-proj and head, whose busiest SMs
// took 4-25 % more rows that way, lost up to 2.6 % on an H100.
func (g GPU) IntLanes(dt ir.DType, in, out int64) (s, sets int64) {
	groups := in / IntDotGroups[dt]
	for s = 32; s < LinThreads && s < groups; s *= 2 {
	}
	idle := func(s int64) int64 { return ceilDiv(groups, s)*s - groups }
	for n := s / 2; n >= 32; n /= 2 {
		if idle(n) < idle(s) && ceilDiv(out, 4*LinThreads/n) >= g.manyWaves() {
			s = n
		}
	}
	if n := max(ceilDiv(groups, 16)*16, 32); n < s && LinThreads/n > LinThreads/s && g.rowsPerSM(out, LinThreads/n) <= g.rowsPerSM(out, LinThreads/s) {
		s = n
	}
	return s, LinThreads / s
}

// rowsPerSM is the rows of the SM with the most blocks when out rows go 4
// a set in blocks of sets sets.
func (g GPU) rowsPerSM(out, sets int64) int64 {
	return ceilDiv(ceilDiv(out, 4*sets), g.SMs) * 4 * sets
}

// manyWaves is the grid (8 blocks an SM) past which a kernel's last,
// partial wave of blocks costs little.
func (g GPU) manyWaves() int64 { return 8 * g.SMs }

// weightLayout is what fixes a weight's accessor (codegen/cuda): its dtype,
// its layout (a layout pass's, or GGUF order) and its blocks.
type weightLayout struct {
	dtype  ir.DType
	layout string
	elems  int64
}

func layoutOf(w *ir.Node) weightLayout {
	return weightLayout{w.DType, w.Str("layout"), w.Shape.Elems(1)}
}

// laidOut reports whether w has its dtype's GPU layout.
func (w weightLayout) laidOut() bool { return w.layout == LayoutName(w.dtype) }

// mmaLayout reports whether weight w has the MmaCodes of swiglu_mma
// (mma.cu.tmpl): Q4_K, whose GPU layout is GGUF order, or Q5_K in its GPU
// layout.
func (w weightLayout) mmaLayout() bool {
	return w.dtype == ir.Q4_K || w.dtype == ir.Q5_K && w.laidOut()
}

// qkvMMALayout reports whether weight w has the MmaCodes of qkv_mma: those
// of mmaLayout, or Q6_K in its GPU layout (the v of llama.cpp's Q4_K_M in
// half the layers).
func (w weightLayout) qkvMMALayout() bool {
	return w.mmaLayout() || w.dtype == ir.Q6_K && w.laidOut()
}

// MMAWarps reports whether weights ga, ua over rows of in take the
// tensor-core kernels (swiglu_mma, qkv_mma): one layout with MmaCodes,
// whole super-blocks that at most 8 warps share alike, at most 3 a warp
// (their activations' B words stay in registers); and the warps and
// super-blocks a warp, the fewest a warp.
func MMAWarps(ga, ua *ir.Node, in int64) (nw, upw int64, ok bool) {
	if layoutOf(ga) != layoutOf(ua) || !layoutOf(ga).mmaLayout() {
		return 0, 0, false
	}
	return mmaWarps(in)
}

// mmaWarps is a tensor-core kernel's warps and super-blocks a warp over
// rows of in: whole super-blocks that at most 8 warps share alike, at most
// 3 a warp, the fewest a warp.
func mmaWarps(in int64) (nw, upw int64, ok bool) {
	if in%256 != 0 {
		return 0, 0, false
	}
	for nb, upw := in/256, int64(1); upw <= 3; upw++ {
		if nb%upw == 0 && nb/upw <= 8 {
			return nb / upw, upw, true
		}
	}
	return 0, 0, false
}

// streamUnits are the layouts whose rows a decode kernel can stream
// (q8_stream.cu.tmpl, stream_rows), by dtype, in their GPU layout but
// Q4_K's (GGUF order either way): the bytes of each 256-element block in
// each section, as the accessors' Units in weights.cu.tmpl. The kernel
// asserts that SMEM is whole stages of its own span_bytes;
// TestStreamedSwiGLU (codegen/cuda) checks the sizes here,
// TestGPUSwiGLUStreams the results.
var streamUnits = map[ir.DType][]int64{
	ir.Q4_K: {144},
	ir.Q5_K: {128, 32, 16},
	ir.Q6_K: {192, 16, 2},
}

// Streaming pays where each block has chunks to pipeline: two stages and
// two blocks an SM (eight warps each), and at least streamChunksPerBlock
// chunks a block. On an H200 in Phi-3-mini's decode step, its SwiGLU (1024
// chunks, 3.9 a block) went from 14.8 to 12.2 µs; the down projections (384
// chunks: 1.5 a block, or 2.9 at one block an SM), qkv (576) and o-proj
// (192) gained nothing or lost (one block an SM: 8 warps an SM leave the
// dots latency-bound), and three stages lost to two.
const (
	streamStages         = 2
	streamBlocksPerSM    = 2
	streamChunksPerBlock = 3
)

// Stream is how a decode kernel streams its weights: the stages' shared
// memory (its SMEM; 0: it does not stream) and its blocks.
type Stream struct{ Smem, Blocks int64 }

// Streams decides for an integer-path kernel over x [.., in] (in the
// prefill or decode schedule) whose chunks (its blocks without streaming)
// are spans spans of at most chunkRows rows of weight w.
func (g GPU) Streams(x, w *ir.Node, prefill bool, in, chunks, spans, chunkRows int64) Stream {
	if chunks < streamChunksPerBlock*streamBlocksPerSM*g.SMs {
		return Stream{}
	}
	return g.MMAStreams(x, []*ir.Node{w}, prefill, in, chunks, spans, chunkRows)
}

// MMAStreams is Streams without the rule of chunks a block, for the
// tensor-core kernels (mma.cu.tmpl), whose chunks take a fraction of the
// integer path's instructions: Phi-3-mini's qkv streams its 576 chunks (2.2
// a block) and gained. A chunk's spans are of one of weights ws, each
// staged in room for the widest (q8_stream.cu.tmpl's max_span).
func (g GPU) MMAStreams(x *ir.Node, ws []*ir.Node, prefill bool, in, chunks, spans, chunkRows int64) Stream {
	if TokenTile(x, prefill) != 1 {
		return Stream{}
	}
	var widest int64
	for _, w := range ws {
		units, ok := streamUnits[w.DType]
		if !ok || w.DType != ir.Q4_K && !layoutOf(w).laidOut() {
			return Stream{}
		}
		var span int64 // q8_stream.cu.tmpl's span_bytes
		for _, u := range units {
			span += ((chunkRows*in/256*u+15)/16 + 1) * 16
		}
		widest = max(widest, span)
	}
	smem := streamStages * spans * widest
	if streamBlocksPerSM*(smem+1<<10) > g.SmemPerSM {
		return Stream{}
	}
	return Stream{Smem: smem, Blocks: min(chunks, streamBlocksPerSM*g.SMs)}
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// attend_decode's block (attention.cu.tmpl): DecodeAttnWarps warps, each
// taking tiles of DecodeAttnKeys keys, ir.DecodeAttnRound a round.
const (
	DecodeAttnWarps = 4
	DecodeAttnKeys  = ir.DecodeAttnRound / DecodeAttnWarps
)

// DecodeAttnStageBytes is one stage of attend_decode's ring for head_dim
// hd: every warp's K and V tile (attnTileRowBytes a key).
func DecodeAttnStageBytes(hd int64, kv8 bool) int64 {
	return DecodeAttnWarps * 2 * DecodeAttnKeys * attnTileRowBytes(hd, kv8)
}

// attnTileRowBytes is a key's row of a K or V tile in an attention
// kernel's shared memory: head_dim padded to 16 and 8 halves more, or an
// 8-bit cache's codes and 16 bytes more (its scale at their end).
func attnTileRowBytes(hd int64, kv8 bool) int64 {
	if kv8 {
		return ceilDiv(hd, 16)*16 + 16
	}
	return (ceilDiv(hd, 16)*16 + 8) * 2
}

// linear_mmas (codegen/cuda, mma_slabs.cu.tmpl) streams a decode linear's
// tiles of 16 rows in K-slabs of one super-block a warp. It pays only where
// a block has slabs to pipeline and keeps enough bytes in flight: the
// integer GEMV's blocks are one DRAM round trip each, their bytes in
// flight bounded by registers (ncu, H200: Llama-3.1-8B's down 14336 → 4096
// DRAM 30 % busy, its o-proj 22 %), and one chunk a block on tensor cores
// (o-proj and downs, one round) gained nothing. Little's law puts the bytes
// an SM must keep in flight at bandwidth × latency / SMs: 4.8 TB/s × about
// 1 µs / 132 ≈ 36 KB on an H200. More stages than that lost: Llama-3.1-8B's
// down in a chain of 8 (H200, µs a launch; linear_q8 18.47 and 24.87 with
// its quantize_x8 shared) took Q4_K 14.94 in 3 stages, 19.97 in 6, 22.88
// at 4 warps in 8 (pieces of 576 bytes a row); Q6_K 24.12 in 3, 24.63 in 4.
// The o-proj's 4-warp slabs are not timed, so it keeps linear_q8. Whole
// models' decode (H200, 2026-11-28, against linear_q8 in one call) set the
// fewest slabs a block at 6: Phi-3-mini's downs (4 slabs) 723.2 → 695.6
// tok/s, Gemma-3-4B's (5) 524.0 → 522.9, Qwen3-8B's (6) 370.3 → 396.1,
// Llama-3.1-8B's (7) 409.6 → 437.3.
const (
	linearSlabsBlocksPerSM = 2        // blocks of 8 warps an SM, as the other streams
	linearSlabsWarps       = 8        // a slab of 8 super-blocks: pieces of 1,152 bytes a row of Q4_K
	linearSlabsPerBlock    = 6        // the fewest slabs a block that stream
	linearSlabsInFlight    = 32 << 10 // the fewest stage bytes in flight an SM
	linearSlabsMaxStages   = 3
)

// LinearSlabs is a linear_mmas geometry: NW warps of one super-block a
// slab each (a slab of 256·NW elements), Stages stages of Stage bytes
// (Smem in all) a block, Blocks blocks.
type LinearSlabs struct{ NW, Stages, Stage, Smem, Blocks int64 }

// SlabBytes is a linear_mmas stage: 16 rows of slab super-blocks of each
// section of units (mma_slabs.cu.tmpl, slab_bytes).
func SlabBytes(units []int64, slab int64) int64 {
	var b int64
	for _, u := range units {
		b += 16 * slab * u
	}
	return b
}

// LinearSlabs decides whether decode linear w [out, in] streams in K-slabs
// on the tensor cores, and its geometry: its weights with MmaCodes (Q4_K,
// Q5_K and Q6_K in their GPU layouts), out in whole tiles of 16 rows, each
// section's row pieces whole aligned 16-byte units (bulk copies); of
// linearSlabsWarps warps where each block gets at least
// linearSlabsPerBlock slabs and keeps at least linearSlabsInFlight bytes in
// flight an SM with its stages, as many as fit linearSlabsBlocksPerSM
// blocks an SM beside each block's 2 KiB (the reserved 1 KiB, its static
// partial sums and barriers), at most linearSlabsMaxStages and the block's
// slabs.
func (g GPU) LinearSlabs(w *ir.Node, in, out int64) (LinearSlabs, bool) {
	units, ok := streamUnits[w.DType]
	if !ok || !layoutOf(w).qkvMMALayout() || in%256 != 0 || out%16 != 0 {
		return LinearSlabs{}, false
	}
	nb, tiles, nw := in/256, out/16, int64(linearSlabsWarps)
	aligned := nb%nw == 0
	for _, u := range units {
		aligned = aligned && nb*u%16 == 0 && nw*u%16 == 0
	}
	blocks := min(tiles, linearSlabsBlocksPerSM*g.SMs)
	slabs := ceilDiv(tiles, blocks) * (nb / nw)
	stage := SlabBytes(units, nw)
	stages := min(slabs, linearSlabsMaxStages, (g.SmemPerSM/linearSlabsBlocksPerSM-2<<10)/stage)
	perSM := min(linearSlabsBlocksPerSM, ceilDiv(blocks, g.SMs))
	if !aligned || slabs < linearSlabsPerBlock || stages < 2 || perSM*(stages-1)*stage < linearSlabsInFlight {
		return LinearSlabs{}, false
	}
	return LinearSlabs{NW: nw, Stages: stages, Stage: stage, Smem: stages * stage, Blocks: blocks}, true
}

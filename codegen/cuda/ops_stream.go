package cuda

import (
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// streamUnits are the layouts whose rows a decode SwiGLU can stream
// (q8_stream.cu.tmpl, stream_rows), by dtype and split layout: the bytes of each
// 256-element block in each section, as the accessors' Units in
// weights.cu.tmpl. The kernel asserts that SMEM is whole stages of its own
// span_bytes; TestStreamedSwiGLU checks the sizes here, TestGPUSwiGLUStreams
// the results.
var streamUnits = map[streamLayout][]int64{
	{ir.Q4_K, false}: {144},
	{ir.Q5_K, true}:  {128, 32, 16},
	{ir.Q6_K, true}:  {192, 16, 2},
}

// streamLayout is a weight layout: its dtype, and whether it is split.
type streamLayout struct {
	dtype ir.DType
	split bool
}

// Streaming pays where each block has chunks to pipeline: two stages and
// two blocks an SM (eight warps each), and at least streamChunksPerBlock
// chunks a block. On an H200 in Phi-3-mini's decode step (KERNELS.md,
// fourteenth session), its SwiGLU (1024 chunks, 3.9 a block) went from
// 14.8 to 12.2 µs; the down projections (384 chunks: 1.5 a block, or 2.9 at
// one block an SM), qkv (576) and o-proj (192) gained nothing or lost (one
// block an SM: 8 warps an SM leave the dots latency-bound), and three
// stages lost to two.
const (
	streamStages         = 2
	streamBlocksPerSM    = 2
	streamChunksPerBlock = 3
)

// stream is how a decode kernel streams its weights: the stages' shared
// memory (its SMEM; 0: it does not stream) and its blocks.
type stream struct{ smem, blocks int64 }

// streams decides for an integer-path decode kernel over x [.., in] whose
// chunks (its blocks without streaming) are spans spans of at most
// chunkRows rows of a weight with accessor acc.
func (e *emitter) streams(x *ir.Node, acc accessor, in, chunks, spans, chunkRows int64) stream {
	if chunks < streamChunksPerBlock*streamBlocksPerSM*e.SMs {
		return stream{}
	}
	return e.mmaStreams(x, acc, in, chunks, spans, chunkRows)
}

// mmaStreams is streams without the rule of chunks a block, for the
// tensor-core kernels (mma.cu.tmpl), whose chunks take a fraction of the
// integer path's instructions: Phi-3-mini's qkv streams its 576 chunks (2.2
// a block) and gained (KERNELS.md, sixteenth session).
func (e *emitter) mmaStreams(x *ir.Node, acc accessor, in, chunks, spans, chunkRows int64) stream {
	units, ok := streamUnits[streamLayout{acc.dtype, acc.split}]
	if !ok || e.tokenTile(x) != 1 {
		return stream{}
	}
	var span int64 // q8_stream.cu.tmpl's span_bytes
	for _, u := range units {
		span += ((chunkRows*in/256*u+15)/16 + 1) * 16
	}
	smem := streamStages * spans * span
	if streamBlocksPerSM*(smem+1<<10) > e.SmemPerSM {
		return stream{}
	}
	return stream{smem: smem, blocks: min(chunks, streamBlocksPerSM*e.SMs)}
}

// launch sets the stream's shared memory on the kernel's launch, the last
// of ls.
func (s stream) launch(ls []plans.Launch, err error) ([]plans.Launch, error) {
	if err == nil && len(ls) > 0 {
		ls[len(ls)-1].Smem = int(s.smem)
	}
	return ls, err
}

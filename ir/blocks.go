package ir

// blockBytes is the encoded size of one block of each storage dtype (of
// BlockElems elements): the ggml block layouts, which weights keep from
// GGUF to the kernels' accessors.
var blockBytes = map[DType]int64{
	F32: 4, F16: 2, BF16: 2, I32: 4,
	Q4_0: 18, Q5_0: 22, Q8_0: 34, MXFP4: 17, Q4_K: 144, Q5_K: 176, Q6_K: 210,
}

// BlockBytes is the encoded size of one block of d (0 for a dtype with no
// storage, none).
func BlockBytes(d DType) int64 { return blockBytes[d] }

// RowBytes is the encoded size of elems elements of d; elems must be a
// multiple of BlockElems(d).
func RowBytes(d DType, elems int64) int64 { return elems / BlockElems(d) * BlockBytes(d) }

package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// splitSection is one field of a quant block that the GPU layout gathers
// into its own section: bytes [from, from+size) of every block.
type splitSection struct{ from, size int }

// splitSections are the GPU layouts (gpu_<dtype>) that differ from GGUF
// order. GGUF interleaves 2-byte scales with quants in blocks of 18, 22, 34,
// 17 and 210 bytes, so a block's quants are not 16-byte aligned; the GPU
// layout stores every block's quants first (16-byte multiples: one lane reads
// them with 128-bit loads) and then each scale field as its own array.
// Q4_K and Q5_K blocks (144, 176 bytes, scales leading) are already aligned:
// their GPU layout is GGUF order, as are F32, F16 and BF16.
var splitSections = map[ir.DType][]splitSection{
	ir.Q4_0:  {{2, 16}, {0, 2}},               // qs, d
	ir.Q5_0:  {{6, 16}, {2, 4}, {0, 2}},       // qs, qh, d
	ir.Q8_0:  {{2, 32}, {0, 2}},               // qs, d
	ir.MXFP4: {{1, 16}, {0, 1}},               // qs, e
	ir.Q6_K:  {{0, 192}, {192, 16}, {208, 2}}, // ql+qh, scales, d
}

// Relayout returns t's bytes in the layout t.Layout names, from src in GGUF
// order: identity for "" and for the gpu_<dtype> layouts equal to GGUF order,
// the section split above otherwise, applied to each of t.Segments (row
// ranges that kernels read as tensors of their own: fuseQKV's slices of a
// packed attn_qkv) on its own, so each stays one span of the result.
func Relayout(t *plans.Tensor, src []byte) ([]byte, error) {
	dt, ok := ir.ParseDType(t.DType)
	if !ok {
		return nil, fmt.Errorf("relayout %q: unknown dtype %q", t.Name, t.DType)
	}
	if t.Layout == "" {
		return src, nil
	}
	if t.Layout != passes.LayoutName(dt) {
		return nil, fmt.Errorf("relayout %q: layout %q is not %q", t.Name, t.Layout, passes.LayoutName(dt))
	}
	secs, ok := splitSections[dt]
	if !ok {
		return src, nil
	}
	gt, _ := gguf.TypeByName(t.DType)
	bb := gt.BlockBytes()
	if len(src)%bb != 0 || int64(len(src)) != t.Bytes {
		return nil, fmt.Errorf("relayout %q: %d bytes are not the table's %d in whole %s blocks of %d bytes", t.Name, len(src), t.Bytes, t.DType, bb)
	}
	dst := make([]byte, 0, len(src))
	segments := t.Segments
	if len(segments) == 0 {
		segments = []int64{t.Shape[0]}
	}
	var first int64
	for _, rows := range segments {
		start, n, err := t.Rows(first, rows)
		if err != nil {
			return nil, fmt.Errorf("relayout %q: %w", t.Name, err)
		}
		dst = splitBlocks(dst, src[start:start+n], bb, secs)
		first += rows
	}
	if first != t.Shape[0] {
		return nil, fmt.Errorf("relayout %q: segments %v cover %d of %d rows", t.Name, t.Segments, first, t.Shape[0])
	}
	return dst, nil
}

// splitBlocks appends the blocks of src (bb bytes each) to dst section by
// section.
func splitBlocks(dst, src []byte, bb int, secs []splitSection) []byte {
	nblk := len(src) / bb
	for _, s := range secs {
		for b := range nblk {
			dst = append(dst, src[b*bb+s.from:b*bb+s.from+s.size]...)
		}
	}
	return dst
}

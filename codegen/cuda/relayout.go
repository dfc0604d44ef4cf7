package cuda

import (
	"encoding/binary"
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// sections are fields of a quant block, each bytes [from, from+size) of
// every block, that a GPU layout gathers into sections of their own.
type sections []struct{ from, size int }

// splitLayout appends the GPU layout of src, whole blocks of bb bytes, to dst.
type splitLayout func(dst, src []byte, bb int) []byte

// splitLayouts are the GPU layouts (gpu_<dtype>) that differ from GGUF
// order; the kernels read them through W_<dtype>_split (args.go). GGUF
// interleaves 2-byte scales with quants in blocks of 18, 22, 34, 17 and 210
// bytes, so a block's quants are not 16-byte aligned; the GPU layout stores
// every block's quants first (16-byte multiples: one lane reads them with
// 128-bit loads) and then each scale field as its own array. Q4_K blocks
// (144 bytes, scales leading) are already aligned: their GPU layout is GGUF
// order, as are F32, F16 and BF16. Q5_K's is splitQ5K.
var splitLayouts = map[ir.DType]splitLayout{
	ir.Q4_0:  sections{{2, 16}, {0, 2}}.split,               // qs, d
	ir.Q5_0:  sections{{6, 16}, {2, 4}, {0, 2}}.split,       // qs, qh, d
	ir.Q8_0:  sections{{2, 32}, {0, 2}}.split,               // qs, d
	ir.MXFP4: sections{{1, 16}, {0, 1}}.split,               // qs, e
	ir.Q6_K:  sections{{0, 192}, {192, 16}, {208, 2}}.split, // ql+qh, scales, d
	ir.Q5_K:  splitQ5K,
}

// Relayout returns t's bytes in the layout t.Layout names, from src in GGUF
// order: identity for "" and for the gpu_<dtype> layouts equal to GGUF order,
// the split layout above otherwise, applied to each of t.Segments (row
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
	split, ok := splitLayouts[dt]
	if !ok {
		return src, nil
	}
	bb := int(ir.BlockBytes(dt))
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
		dst = split(dst, src[start:start+n], bb)
		first += rows
	}
	if first != t.Shape[0] {
		return nil, fmt.Errorf("relayout %q: segments %v cover %d of %d rows", t.Name, t.Segments, first, t.Shape[0])
	}
	return dst, nil
}

// split appends the blocks of src (bb bytes each) to dst section by
// section.
func (secs sections) split(dst, src []byte, bb int) []byte {
	nblk := len(src) / bb
	for _, s := range secs {
		for b := range nblk {
			dst = append(dst, src[b*bb+s.from:b*bb+s.from+s.size]...)
		}
	}
	return dst
}

// splitQ5K is gpu_q5_k, for Q5_K blocks (d, dmin, scales[12], qh[32],
// qs[128]): every block's qs, then every block's fifth bits, 8 bytes for
// each 64-element group, then every block's d, dmin and scales. GGUF
// spreads a group's 64 fifth bits over all 32 qh bytes (bits 2c and 2c+1 of
// qh[l] are elements 64c+l and 64c+32+l of group c), so a group's fetch
// loaded 32 bytes of them for 8. A group's 8 bytes are two little-endian
// 32-bit words, of its 32 elements in low nibbles (64c+l) and of those in
// high nibbles (64c+32+l); element l = 4i+k, in byte k of the group's quant
// word i, is bit 8k+i of its word, so one shift and one mask put word i's
// fifth bits in place (templates/q8_dot.cu.tmpl, W_q5_k_split_dot).
func splitQ5K(dst, src []byte, bb int) []byte {
	dst = sections{{48, 128}}.split(dst, src, bb)
	for b := 0; b < len(src); b += bb {
		qh := src[b+16 : b+48]
		for c := range 4 {
			for half := range 2 {
				var h uint32
				for l := range 32 {
					h |= uint32(qh[l]>>(2*c+half)&1) << (8*(l%4) + l/4)
				}
				dst = binary.LittleEndian.AppendUint32(dst, h)
			}
		}
	}
	return sections{{0, 16}}.split(dst, src, bb)
}

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
// the section split above otherwise.
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
	if len(src)%bb != 0 {
		return nil, fmt.Errorf("relayout %q: %d bytes are not whole %s blocks of %d bytes", t.Name, len(src), t.DType, bb)
	}
	nblk := len(src) / bb
	dst := make([]byte, 0, len(src))
	for _, s := range secs {
		for b := range nblk {
			dst = append(dst, src[b*bb+s.from:b*bb+s.from+s.size]...)
		}
	}
	return dst, nil
}

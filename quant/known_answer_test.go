package quant

import (
	"math"
	"testing"

	"github.com/llama-orch/orc/gguf"
)

// knownBlock is one or more hand-built blocks and the values they decode to,
// worked out by hand from the layout in the comment beside each case.
type knownBlock struct {
	name string
	typ  gguf.Type
	data []byte
	want []float32
}

// fill returns n copies of v with the given index→value overrides.
func fill(n int, v float32, overrides map[int]float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	for i, x := range overrides {
		out[i] = x
	}
	return out
}

// bytesAt returns n bytes of base with the given offset→byte overrides.
func bytesAt(n int, base byte, set map[int]byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = base
	}
	for i, v := range set {
		b[i] = v
	}
	return b
}

func knownBlocks() []knownBlock {
	return []knownBlock{
		// f32 little-endian: 0x3fc00000 = 1.5, 0xc0200000 = -2.5.
		{"f32", gguf.F32, []byte{0, 0, 0xc0, 0x3f, 0, 0, 0x20, 0xc0}, []float32{1.5, -2.5}},
		// f16: 0x3c00 = 1, 0xc000 = -2, 0x0001 = 2^-24 (smallest subnormal), 0x7c00 = +Inf.
		{"f16", gguf.F16, []byte{0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0x00, 0x7c},
			[]float32{1, -2, 0x1p-24, float32(math.Inf(1))}},
		// bf16 is the top half of an f32: 0x3f80 = 1, 0x4049 → 0x40490000 = 3.140625.
		{"bf16", gguf.BF16, []byte{0x80, 0x3f, 0x49, 0x40}, []float32{1, 3.140625}},
		// Q4_0: d = 0x3800 = 0.5. qs[0] = 0x1f: element 0 = (15−8)·0.5 = 3.5, element 16 = (1−8)·0.5 = −3.5.
		// qs[1] = 0x80: element 1 = (0−8)·0.5 = −4, element 17 = (8−8)·0.5 = 0. Other bytes 0x88 → 0.
		{"q4_0", gguf.Q4_0, append([]byte{0x00, 0x38}, bytesAt(16, 0x88, map[int]byte{0: 0x1f, 1: 0x80})...),
			fill(32, 0, map[int]float32{0: 3.5, 16: -3.5, 1: -4})},
		// Q5_0: d = 0x3c00 = 1, qh = 0x80010001 (bits 0, 16, 31). qs[0] = 0x21: element 0 = (1|16)−16 = 1,
		// element 16 = (2|16)−16 = 2. qs[1] = 0x0f: element 1 = 15−16 = −1, element 17 = 0−16 = −16.
		// qs[15] = 0x00: element 31 = (0|16)−16 = 0. Every other element: code 0 → −16.
		{"q5_0", gguf.Q5_0, append([]byte{0x00, 0x3c, 0x01, 0x00, 0x01, 0x80}, bytesAt(16, 0, map[int]byte{0: 0x21, 1: 0x0f})...),
			fill(32, -16, map[int]float32{0: 1, 16: 2, 1: -1, 31: 0})},
		// Q8_0: d = 0x3400 = 0.25. qs[0] = 4 → 1, qs[1] = 0xff = −1 → −0.25, qs[31] = 0x80 = −128 → −32.
		{"q8_0", gguf.Q8_0, append([]byte{0x00, 0x34}, bytesAt(32, 0, map[int]byte{0: 4, 1: 0xff, 31: 0x80})...),
			fill(32, 0, map[int]float32{0: 1, 1: -0.25, 31: -32})},
		q4KBlock(),
		q5KBlock(),
		q6KBlock(),
		// MXFP4, two blocks. Block 0: e = 128 → scale 2. qs[0] = 0xf7: element 0 = code 7 = 6·2 = 12,
		// element 16 = code 15 = −6·2 = −12. qs[1] = 0x91: element 1 = 0.5·2 = 1, element 17 = −0.5·2 = −1.
		// Block 1: e = 0 → 2^−127 (ggml's subnormal special case). qs[0] = 0x02: element 32 = 1·2^−127;
		// qs[15] = 0xb0: element 47 = 0, element 63 = code 11 = −1.5·2^−127.
		{"mxfp4", gguf.MXFP4, append(
			append([]byte{128}, bytesAt(16, 0, map[int]byte{0: 0xf7, 1: 0x91})...),
			append([]byte{0}, bytesAt(16, 0, map[int]byte{0: 0x02, 15: 0xb0})...)...),
			fill(64, 0, map[int]float32{0: 12, 16: -12, 1: 1, 17: -1, 32: 0x1p-127, 63: -1.5 * 0x1p-127})},
	}
}

// q4KScales are twelve scale bytes that exercise both halves of the 6-bit
// packing (scaleMinK4):
//
//	s[0] = 0x42 = 01|000010: sub-block 0 scale 2; top bits 01 → sub-block 4 scale += 16
//	s[1] = 0x01:             sub-block 1 scale 1
//	s[4] = 0x83 = 10|000011: sub-block 0 min 3;   top bits 10 → sub-block 4 min += 32
//	s[5] = 0x01:             sub-block 1 min 1
//	s[8] = 0x75:             sub-block 4 scale 5|16 = 21, min 7|32 = 39
//	s[11] = 0x12:            sub-block 7 scale 2, min 1
//
// Sub-blocks 2, 3, 5 and 6 have scale 0 and min 0.
var q4KScales = []byte{0x42, 0x01, 0, 0, 0x83, 0x01, 0, 0, 0x75, 0, 0, 0x12}

// q4KZeroCodes is what code 0 decodes to under q4KScales with d = 1 and
// dmin = 0.5, i.e. −0.5·min: sub-block 0 → −1.5, 1 → −0.5, 4 → −19.5,
// 7 → −0.5, the others 0.
func q4KZeroCodes() []float32 {
	want := make([]float32, 256)
	for i := range want {
		want[i] = map[int]float32{0: -1.5, 1: -0.5, 4: -19.5, 7: -0.5}[i/32]
	}
	return want
}

// q4KBlock: d = 1 (0x3c00), dmin = 0.5 (0x3800), value = d·sc·q − dmin·m.
//
//	qs[0] = 0x3a: element 0 (sub-block 0, low nibble 10) = 2·10 − 0.5·3 = 18.5;
//	              element 32 (sub-block 1, high nibble 3) = 1·3 − 0.5·1 = 2.5
//	qs[64] = 0x09: element 128 (sub-block 4, chunk 2 low nibble 9) = 21·9 − 0.5·39 = 169.5
//	qs[127] = 0xf0: element 255 (sub-block 7, chunk 3 high nibble 15) = 2·15 − 0.5·1 = 29.5
//
// Every other element has code 0: sub-block 0 → −1.5, 1 → −0.5, 4 → −19.5, 7 → −0.5, others 0.
func q4KBlock() knownBlock {
	data := append([]byte{0x00, 0x3c, 0x00, 0x38}, q4KScales...)
	data = append(data, bytesAt(128, 0, map[int]byte{0: 0x3a, 64: 0x09, 127: 0xf0})...)
	want := q4KZeroCodes()
	want[0], want[32], want[128], want[255] = 18.5, 2.5, 169.5, 29.5
	return knownBlock{"q4_k", gguf.Q4_K, data, want}
}

// q5KBlock: the Q4_K scales, d = 1, dmin = 0.5, plus fifth bits in qh:
//
//	qh[0] = 0x13: bit 0 → element 0, bit 1 → element 32, bit 4 → element 128 get +16
//	qh[1] = 0x80: bit 7 → element 64·3+32+1 = 225 gets +16
//	qs[0] = 0x3a: element 0 = 2·(10+16) − 1.5 = 50.5; element 32 = 1·(3+16) − 0.5 = 18.5
//	qs[64] = 0x09: element 128 = 21·(9+16) − 19.5 = 505.5
//	element 225: 2·(0+16) − 0.5 = 31.5
//
// Every other element has code 0, as in q4KBlock.
func q5KBlock() knownBlock {
	data := append([]byte{0x00, 0x3c, 0x00, 0x38}, q4KScales...)
	data = append(data, bytesAt(32, 0, map[int]byte{0: 0x13, 1: 0x80})...)
	data = append(data, bytesAt(128, 0, map[int]byte{0: 0x3a, 64: 0x09})...)
	want := q4KZeroCodes()
	want[0], want[32], want[128], want[225] = 50.5, 18.5, 505.5, 31.5
	return knownBlock{"q5_k", gguf.Q5_K, data, want}
}

// q6KBlock: d = 0.5 (0x3800, stored last); scales[0] = 2, [2] = −1, [4] = 3,
// [6] = 1, [8] = 4, the rest 0. value = d·scale·(code − 32).
//
// First half, l = 0: ql[0] = 0x5a (low 10, high 5), ql[32] = 0xc3 (low 3, high 12),
// qh[0] = 0xe4 = 11|10|01|00:
//
//	element 0  = 10 | 0<<4 = 10 → 0.5·2·(10−32)  = −22
//	element 32 =  3 | 1<<4 = 19 → 0.5·−1·(19−32) = 6.5
//	element 64 =  5 | 2<<4 = 37 → 0.5·3·(37−32)  = 7.5
//	element 96 = 12 | 3<<4 = 60 → 0.5·1·(60−32)  = 14
//
// Other l < 16 have code 0 (−32): elements 1-15 → −32, 33-47 → 16, 65-79 → −48,
// 97-111 → −16; l ≥ 16 use scales 1, 3, 5, 7 = 0.
// Second half, l = 0: ql[64] = 0x01, qh[32] = 0x02: element 128 = 1 | 2<<4 = 33 → 0.5·4·1 = 2;
// elements 129-143 → 0.5·4·−32 = −64; the rest of the second half has scale 0.
func q6KBlock() knownBlock {
	data := bytesAt(128, 0, map[int]byte{0: 0x5a, 32: 0xc3, 64: 0x01})
	data = append(data, bytesAt(64, 0, map[int]byte{0: 0xe4, 32: 0x02})...)
	data = append(data, 2, 0, 0xff, 0, 3, 0, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0)
	data = append(data, 0x00, 0x38)
	want := make([]float32, 256)
	for l := 0; l < 16; l++ {
		want[l], want[l+32], want[l+64], want[l+96] = -32, 16, -48, -16
		want[128+l] = -64
	}
	want[0], want[32], want[64], want[96], want[128] = -22, 6.5, 7.5, 14, 2
	return knownBlock{"q6_k", gguf.Q6_K, data, want}
}

func TestKnownAnswers(t *testing.T) {
	for _, kb := range knownBlocks() {
		t.Run(kb.name, func(t *testing.T) {
			if len(kb.data) != int(kb.typ.RowBytes(int64(len(kb.want)))) {
				t.Fatalf("test block is %d bytes, %s needs %d", len(kb.data), kb.typ, kb.typ.RowBytes(int64(len(kb.want))))
			}
			got := make([]float32, len(kb.want))
			if err := Dequantize(kb.typ, kb.data, got); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != kb.want[i] {
					t.Errorf("element %d = %v, want %v", i, got[i], kb.want[i])
				}
			}
			// Dot against unit vectors picks out each element exactly
			// (0·Inf would be NaN, so rows holding an Inf skip this).
			for _, w := range kb.want {
				if math.IsInf(float64(w), 0) {
					return
				}
			}
			x := make([]float32, len(kb.want))
			for i := range x {
				x[i] = 1
				if d := Dot(kb.typ, kb.data, x); d != kb.want[i] {
					t.Errorf("Dot with unit vector %d = %v, want %v", i, d, kb.want[i])
				}
				x[i] = 0
			}
		})
	}
}

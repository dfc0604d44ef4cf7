package quant

// Q6_K super-block, 210 bytes for 256 elements in sixteen sub-blocks of 16:
//
//	ql[128]     low four bits
//	qh[64]      high two bits
//	scales[16]  int8 sub-block scales
//	d           f16 (last)
//
// Two halves of 128 elements; half h uses ql[64h:], qh[32h:], scales[8h:].
// Within a half, for l < 32 (is = l/16):
//
//	element l     = ql[l]    low nibble,  qh[l] bits 0-1, scale is
//	element l+32  = ql[l+32] low nibble,  qh[l] bits 2-3, scale is+2
//	element l+64  = ql[l]    high nibble, qh[l] bits 4-5, scale is+4
//	element l+96  = ql[l+32] high nibble, qh[l] bits 6-7, scale is+6
//
// each one d·scale·(code − 32).
const q6_kBytes = 210

// q6Codes returns the four 6-bit codes (minus 32) that ql[l], ql[l+32] and
// qh[l] of one half hold.
func q6Codes(ql *[64]byte, qh *[32]byte, l int) (q1, q2, q3, q4 int) {
	h := qh[l]
	q1 = int(ql[l]&15|(h&3)<<4) - 32
	q2 = int(ql[l+32]&15|(h>>2&3)<<4) - 32
	q3 = int(ql[l]>>4|(h>>4&3)<<4) - 32
	q4 = int(ql[l+32]>>4|(h>>6&3)<<4) - 32
	return
}

func dequantizeQ6_K(src []byte, dst []float32) {
	for len(dst) > 0 {
		blk := (*[q6_kBytes]byte)(src)
		d := half(blk[208:])
		for h := 0; h < 2; h++ {
			ql := (*[64]byte)(blk[64*h:])
			qh := (*[32]byte)(blk[128+32*h:])
			sc := (*[8]byte)(blk[192+8*h:])
			y := (*[128]float32)(dst[128*h:])
			for l := 0; l < 32; l++ {
				is := l / 16
				q1, q2, q3, q4 := q6Codes(ql, qh, l)
				y[l] = d * float32(int8(sc[is])) * float32(q1)
				y[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
				y[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
				y[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
			}
		}
		src, dst = src[q6_kBytes:], dst[kElems:]
	}
}

// dotQ6_K walks each half in two runs of 16 l's, one per scale group, so
// each of the sixteen scales multiplies one partial sum.
func dotQ6_K(row []byte, x []float32) float32 {
	var sum float32
	for len(x) > 0 {
		blk := (*[q6_kBytes]byte)(row)
		var scaled float32
		for h := 0; h < 2; h++ {
			ql := (*[64]byte)(blk[64*h:])
			qh := (*[32]byte)(blk[128+32*h:])
			sc := (*[8]byte)(blk[192+8*h:])
			xs := (*[128]float32)(x[128*h:])
			for is := 0; is < 2; is++ {
				var s1, s2, s3, s4 float32
				for l := 16 * is; l < 16*is+16; l++ {
					q1, q2, q3, q4 := q6Codes(ql, qh, l)
					s1 += float32(q1) * xs[l]
					s2 += float32(q2) * xs[l+32]
					s3 += float32(q3) * xs[l+64]
					s4 += float32(q4) * xs[l+96]
				}
				scaled += float32(int8(sc[is]))*s1 + float32(int8(sc[is+2]))*s2 +
					float32(int8(sc[is+4]))*s3 + float32(int8(sc[is+6]))*s4
			}
		}
		sum += half(blk[208:]) * scaled
		row, x = row[q6_kBytes:], x[kElems:]
	}
	return sum
}

// quantizeQ6_K follows quantize_row_q6_K_ref: a symmetric fit per sub-block
// of 16 (makeQXQuants), the scales quantized to int8 against the one of
// largest magnitude, then every element re-coded against the stored scales.
func quantizeQ6_K(src []float32, dst []byte) {
	var codes [kElems]uint8
	for len(src) > 0 {
		x := (*[kElems]float32)(src)
		blk := (*[q6_kBytes]byte)(dst)
		var scales [16]float32
		var maxScale, maxAbs float32
		for ib := 0; ib < 16; ib++ {
			scales[ib] = makeQXQuants(32, x[16*ib:16*ib+16], codes[16*ib:16*ib+16])
			if a := abs32(scales[ib]); a > maxAbs {
				maxAbs, maxScale = a, scales[ib]
			}
		}
		*blk = [q6_kBytes]byte{}
		if maxAbs < groupMaxEps {
			src, dst = src[kElems:], dst[q6_kBytes:]
			continue
		}
		iscale := -128 / maxScale
		putHalf(blk[208:], 1/iscale)
		for ib := 0; ib < 16; ib++ {
			blk[192+ib] = byte(int8(min(127, nearestInt(iscale*scales[ib]))))
		}
		d := half(blk[208:])
		for j := 0; j < 16; j++ {
			dj := d * float32(int8(blk[192+j]))
			if dj == 0 {
				continue // every code decodes to 0; keep the fit's codes as ggml does
			}
			for i := 0; i < 16; i++ {
				codes[16*j+i] = uint8(clampInt(nearestInt(x[16*j+i]/dj), -32, 31) + 32)
			}
		}
		for h := 0; h < 2; h++ {
			L := codes[128*h:]
			for l := 0; l < 32; l++ {
				blk[64*h+l] = L[l]&15 | (L[l+64]&15)<<4
				blk[64*h+l+32] = L[l+32]&15 | (L[l+96]&15)<<4
				blk[128+32*h+l] = L[l]>>4 | (L[l+32]>>4)<<2 | (L[l+64]>>4)<<4 | (L[l+96]>>4)<<6
			}
		}
		src, dst = src[kElems:], dst[q6_kBytes:]
	}
}

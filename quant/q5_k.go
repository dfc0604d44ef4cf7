package quant

// Q5_K super-block, 176 bytes for 256 elements in eight sub-blocks of 32:
//
//	d, dmin     f16 each   scales of the 6-bit sub-block scales and mins
//	scales[12]             as Q4_K (scaleMinK4)
//	qh[32]                 fifth bits: bit 2c of qh[l] belongs to element
//	                       64c+l, bit 2c+1 to element 64c+32+l
//	qs[128]     nibbles    as Q4_K
//
// element = d·sc·(nibble | fifth bit << 4) − dmin·m.
const q5_kBytes = 176

func dequantizeQ5_K(src []byte, dst []float32) {
	for len(dst) > 0 {
		blk := (*[q5_kBytes]byte)(src)
		y := (*[kElems]float32)(dst)
		d, dmin := half(blk[0:]), half(blk[2:])
		scales := (*[12]byte)(blk[4:])
		qh := (*[32]byte)(blk[16:])
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(blk[48+32*c:])
			sc1, m1 := scaleMinK4(2*c, scales)
			sc2, m2 := scaleMinK4(2*c+1, scales)
			d1, o1 := d*float32(sc1), dmin*float32(m1)
			d2, o2 := d*float32(sc2), dmin*float32(m2)
			for l := 0; l < 32; l++ {
				h := qh[l] >> (2 * c)
				y[64*c+l] = d1*float32(q[l]&15|(h&1)<<4) - o1
				y[64*c+32+l] = d2*float32(q[l]>>4|(h&2)<<3) - o2
			}
		}
		src, dst = src[q5_kBytes:], dst[kElems:]
	}
}

func dotQ5_K(row []byte, x []float32) float32 {
	var sum float32
	for len(x) > 0 {
		blk := (*[q5_kBytes]byte)(row)
		d, dmin := half(blk[0:]), half(blk[2:])
		scales := (*[12]byte)(blk[4:])
		qhs := (*[32]byte)(blk[16:])
		var scaled, offset float32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(blk[48+32*c:])
			xl := (*[32]float32)(x[64*c:])
			xh := (*[32]float32)(x[64*c+32:])
			var ql, qh, sl, sh float32
			for l := 0; l < 32; l++ {
				h := qhs[l] >> (2 * c)
				ql += float32(q[l]&15|(h&1)<<4) * xl[l]
				qh += float32(q[l]>>4|(h&2)<<3) * xh[l]
				sl += xl[l]
				sh += xh[l]
			}
			sc1, m1 := scaleMinK4(2*c, scales)
			sc2, m2 := scaleMinK4(2*c+1, scales)
			scaled += float32(sc1)*ql + float32(sc2)*qh
			offset += float32(m1)*sl + float32(m2)*sh
		}
		sum += d*scaled - dmin*offset
		row, x = row[q5_kBytes:], x[kElems:]
	}
	return sum
}

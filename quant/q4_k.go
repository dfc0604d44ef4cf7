package quant

import "math"

// Q4_K super-block, 144 bytes for 256 elements in eight sub-blocks of 32:
//
//	d, dmin     f16 each   scales of the 6-bit sub-block scales and mins
//	scales[12]             eight 6-bit scales and eight 6-bit mins (scaleMinK4)
//	qs[128]     nibbles    each 32 bytes serve 64 elements: low nibbles are
//	                       sub-block 2c, high nibbles sub-block 2c+1
//
// element = d·sc·q − dmin·m.
const q4_kBytes = 144

func dequantizeQ4_K(src []byte, dst []float32) {
	for len(dst) > 0 {
		blk := (*[q4_kBytes]byte)(src)
		y := (*[kElems]float32)(dst)
		d, dmin := half(blk[0:]), half(blk[2:])
		scales := (*[12]byte)(blk[4:])
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(blk[16+32*c:])
			sc1, m1 := scaleMinK4(2*c, scales)
			sc2, m2 := scaleMinK4(2*c+1, scales)
			d1, o1 := d*float32(sc1), dmin*float32(m1)
			d2, o2 := d*float32(sc2), dmin*float32(m2)
			for l := 0; l < 32; l++ {
				y[64*c+l] = d1*float32(q[l]&15) - o1
				y[64*c+32+l] = d2*float32(q[l]>>4) - o2
			}
		}
		src, dst = src[q4_kBytes:], dst[kElems:]
	}
}

// dotQ4_K sums q·x and x per sub-block, so each sub-block costs one multiply
// by its scale and one by its min.
func dotQ4_K(row []byte, x []float32) float32 {
	var sum float32
	for len(x) > 0 {
		blk := (*[q4_kBytes]byte)(row)
		d, dmin := half(blk[0:]), half(blk[2:])
		scales := (*[12]byte)(blk[4:])
		var scaled, offset float32
		for c := 0; c < 4; c++ {
			q := (*[32]byte)(blk[16+32*c:])
			xl := (*[32]float32)(x[64*c:])
			xh := (*[32]float32)(x[64*c+32:])
			var ql, qh, sl, sh float32
			for l := 0; l < 32; l++ {
				ql += float32(q[l]&15) * xl[l]
				qh += float32(q[l]>>4) * xh[l]
				sl += xl[l]
				sh += xh[l]
			}
			sc1, m1 := scaleMinK4(2*c, scales)
			sc2, m2 := scaleMinK4(2*c+1, scales)
			scaled += float32(sc1)*ql + float32(sc2)*qh
			offset += float32(m1)*sl + float32(m2)*sh
		}
		sum += d*scaled - dmin*offset
		row, x = row[q4_kBytes:], x[kElems:]
	}
	return sum
}

// quantizeQ4_K follows quantize_row_q4_K_ref: a weighted min/scale fit per
// sub-block (makeQKX2Quants), the scales and mins quantized to 6 bits
// against their maxima, then every element re-coded against the stored
// (f16-rounded) scales.
func quantizeQ4_K(src []float32, dst []byte) {
	var laux [32]uint8
	var codes [kElems]uint8
	var weights [32]float32
	for len(src) > 0 {
		x := (*[kElems]float32)(src)
		blk := (*[q4_kBytes]byte)(dst)
		var scales, mins [8]float32
		var maxScale, maxMin float32
		for j := 0; j < 8; j++ {
			xs := x[32*j : 32*j+32]
			var sumX2 float32
			for _, v := range xs {
				sumX2 += v * v
			}
			avX := float32(math.Sqrt(float64(sumX2 / 32)))
			for l, v := range xs {
				weights[l] = avX + abs32(v)
			}
			scales[j], mins[j] = makeQKX2Quants(15, xs, weights[:], codes[32*j:32*j+32], laux[:], -1, 0.1, 20)
			maxScale, maxMin = max(maxScale, scales[j]), max(maxMin, mins[j])
		}
		var invScale, invMin float32
		if maxScale > 0 {
			invScale = 63 / maxScale
		}
		if maxMin > 0 {
			invMin = 63 / maxMin
		}
		var ls, lm [8]uint8
		for j := 0; j < 8; j++ {
			ls[j] = uint8(clampInt(nearestInt(invScale*scales[j]), 0, 63))
			lm[j] = uint8(clampInt(nearestInt(invMin*mins[j]), 0, 63))
		}
		scaleBytes := (*[12]byte)(blk[4:])
		packScaleMinK4(&ls, &lm, scaleBytes)
		putHalf(blk[0:], maxScale/63)
		putHalf(blk[2:], maxMin/63)
		d, dmin := half(blk[0:]), half(blk[2:])
		for j := 0; j < 8; j++ {
			sc, m := scaleMinK4(j, scaleBytes)
			dj := d * float32(sc)
			if dj == 0 {
				continue // every code decodes alike; keep the fit's codes as ggml does
			}
			mj := dmin * float32(m)
			for l := 0; l < 32; l++ {
				codes[32*j+l] = uint8(clampInt(nearestInt((x[32*j+l]+mj)/dj), 0, 15))
			}
		}
		for c := 0; c < 4; c++ {
			for l := 0; l < 32; l++ {
				blk[16+32*c+l] = codes[64*c+l] | codes[64*c+32+l]<<4
			}
		}
		src, dst = src[kElems:], dst[q4_kBytes:]
	}
}

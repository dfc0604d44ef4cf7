package quant

import "math"

// MXFP4 block, 17 bytes for 32 elements:
//
//	e       E8M0   shared exponent: scale 2^(e−127)
//	qs[16]  E2M1   4-bit codes; low nibble of qs[j] is element j, high
//	               nibble element j+16 (as Q4_0)
//
// element = e2m1[code] · 2^(e−127).
const (
	mxfp4Bytes = 17
	mxfp4Elems = 32
)

// e2m1 decodes a 4-bit E2M1 code: sign bit 3, then 0, 0.5, 1, 1.5, 2, 3, 4, 6.
var e2m1 = [16]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5, -2, -3, -4, -6}

// e8m0 decodes a shared exponent as ggml's ggml_e8m0_to_fp32 does: 2^(e−127),
// with e = 0 giving the subnormal 2^−127 and e = 255 +Inf.
func e8m0(e byte) float32 {
	if e == 0 {
		return math.Float32frombits(0x00400000)
	}
	return math.Float32frombits(uint32(e) << 23)
}

func dequantizeMXFP4(src []byte, dst []float32) {
	for len(dst) > 0 {
		blk := (*[mxfp4Bytes]byte)(src)
		y := (*[mxfp4Elems]float32)(dst)
		s := e8m0(blk[0])
		for j := 0; j < 16; j++ {
			q := blk[1+j]
			y[j] = e2m1[q&15] * s
			y[j+16] = e2m1[q>>4] * s
		}
		src, dst = src[mxfp4Bytes:], dst[mxfp4Elems:]
	}
}

func dotMXFP4(row []byte, x []float32) float32 {
	var sum float32
	for len(x) > 0 {
		blk := (*[mxfp4Bytes]byte)(row)
		xs := (*[mxfp4Elems]float32)(x)
		var lo, hi float32
		for j := 0; j < 16; j++ {
			q := blk[1+j]
			lo += e2m1[q&15] * xs[j]
			hi += e2m1[q>>4] * xs[j+16]
		}
		sum += e8m0(blk[0]) * (lo + hi)
		row, x = row[mxfp4Bytes:], x[mxfp4Elems:]
	}
	return sum
}

// mxfp4Exponent picks the smallest E8M0 exponent whose scale lets E2M1's
// largest magnitude, 6, cover amax, so no element is clipped. ggml's
// quantize_row_mxfp4_ref instead takes floor(log2 amax) − 2, which clips
// block maxima between 6 and 8 scale units down to 6; the project's choice
// trades that clipping for a coarser grid on such blocks.
func mxfp4Exponent(amax float32) byte {
	if amax == 0 {
		return 0
	}
	// amax/6 = frac·2^exp with frac in [0.5, 1): 2^exp is the smallest
	// power of two ≥ amax/6, unless amax/6 is itself a power of two.
	frac, exp := math.Frexp(float64(amax) / 6)
	if frac == 0.5 {
		exp--
	}
	return byte(min(254, max(0, exp+127)))
}

// quantizeMXFP4 encodes each element as the nearest E2M1 value at the
// block's scale (the first code on ties, as ggml's best_index_mxfp4).
func quantizeMXFP4(src []float32, dst []byte) {
	for len(src) > 0 {
		x := (*[mxfp4Elems]float32)(src)
		blk := (*[mxfp4Bytes]byte)(dst)
		var amax float32
		for _, v := range x {
			amax = max(amax, abs32(v))
		}
		e := mxfp4Exponent(amax)
		blk[0] = e
		s := e8m0(e)
		for j := 0; j < 16; j++ {
			blk[1+j] = nearestE2M1(x[j], s) | nearestE2M1(x[j+16], s)<<4
		}
		src, dst = src[mxfp4Elems:], dst[mxfp4Bytes:]
	}
}

func nearestE2M1(v, scale float32) byte {
	best, bestErr := byte(0), abs32(v)
	for c := 1; c < 16; c++ {
		if err := abs32(e2m1[c]*scale - v); err < bestErr {
			best, bestErr = byte(c), err
		}
	}
	return best
}

package quant

import "math"

// Q8_0 block, 34 bytes for 32 elements:
//
//	d      f16    scale
//	qs[32] int8   element = d * qs[j]
const (
	q8_0Bytes = 34
	q8_0Elems = 32
)

func dequantizeQ8_0(src []byte, dst []float32) {
	for len(dst) > 0 {
		blk := (*[q8_0Bytes]byte)(src)
		y := (*[q8_0Elems]float32)(dst)
		d := half(blk[0:])
		for j := 0; j < 32; j++ {
			y[j] = d * float32(int8(blk[2+j]))
		}
		src, dst = src[q8_0Bytes:], dst[q8_0Elems:]
	}
}

func dotQ8_0(row []byte, x []float32) float32 {
	var sum float32
	for len(x) > 0 {
		blk := (*[q8_0Bytes]byte)(row)
		xs := (*[q8_0Elems]float32)(x)
		var s0, s1 float32
		for j := 0; j < 32; j += 2 {
			s0 += float32(int8(blk[2+j])) * xs[j]
			s1 += float32(int8(blk[3+j])) * xs[j+1]
		}
		sum += half(blk[0:]) * (s0 + s1)
		row, x = row[q8_0Bytes:], x[q8_0Elems:]
	}
	return sum
}

// quantizeQ8_0 follows quantize_row_q8_0_ref: d = max|x| / 127, codes
// rounded half away from zero.
func quantizeQ8_0(src []float32, dst []byte) {
	for len(src) > 0 {
		x := (*[q8_0Elems]float32)(src)
		blk := (*[q8_0Bytes]byte)(dst)
		var amax float32
		for _, v := range x {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putHalf(blk[0:], d)
		for j, v := range x {
			blk[2+j] = byte(int8(math.Round(float64(v * id))))
		}
		src, dst = src[q8_0Elems:], dst[q8_0Bytes:]
	}
}

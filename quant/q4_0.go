package quant

// Q4_0 block, 18 bytes for 32 elements:
//
//	d      f16       scale
//	qs[16] nibbles   low nibble of qs[j] is element j, high nibble element j+16
//
// element = d * (nibble - 8).
const (
	q4_0Bytes = 18
	q4_0Elems = 32
)

func dequantizeQ4_0(src []byte, dst []float32) {
	for len(dst) > 0 {
		blk := (*[q4_0Bytes]byte)(src)
		y := (*[q4_0Elems]float32)(dst)
		d := half(blk[0:])
		for j := 0; j < 16; j++ {
			q := blk[2+j]
			y[j] = d * float32(int(q&15)-8)
			y[j+16] = d * float32(int(q>>4)-8)
		}
		src, dst = src[q4_0Bytes:], dst[q4_0Elems:]
	}
}

func dotQ4_0(row []byte, x []float32) float32 {
	var sum float32
	for len(x) > 0 {
		blk := (*[q4_0Bytes]byte)(row)
		xs := (*[q4_0Elems]float32)(x)
		var lo, hi float32
		for j := 0; j < 16; j++ {
			q := blk[2+j]
			lo += float32(int(q&15)-8) * xs[j]
			hi += float32(int(q>>4)-8) * xs[j+16]
		}
		sum += half(blk[0:]) * (lo + hi)
		row, x = row[q4_0Bytes:], x[q4_0Elems:]
	}
	return sum
}

// quantizeQ4_0 follows quantize_row_q4_0_ref: the element of largest
// magnitude maps to code 0 (value -8·d) so its sign is exact; codes round
// half up and clamp at 15.
func quantizeQ4_0(src []float32, dst []byte) {
	for len(src) > 0 {
		x := (*[q4_0Elems]float32)(src)
		blk := (*[q4_0Bytes]byte)(dst)
		d := signedAbsMax(x[:]) / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putHalf(blk[0:], d)
		for j := 0; j < 16; j++ {
			lo := clampInt(int(x[j]*id+8.5), 0, 15)
			hi := clampInt(int(x[j+16]*id+8.5), 0, 15)
			blk[2+j] = byte(lo) | byte(hi)<<4
		}
		src, dst = src[q4_0Elems:], dst[q4_0Bytes:]
	}
}

// signedAbsMax returns the element of largest magnitude, sign kept (the first
// one on ties), as ggml's legacy quantizers pick it.
func signedAbsMax(x []float32) float32 {
	var amax, m float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, m = a, v
		}
	}
	return m
}

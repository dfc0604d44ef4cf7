package quant

import "encoding/binary"

// Q5_0 block, 22 bytes for 32 elements:
//
//	d      f16       scale
//	qh[4]  u32       bit j is the fifth bit of element j
//	qs[16] nibbles   low nibble of qs[j] is element j, high nibble element j+16
//
// element = d * (code - 16), code = nibble | fifth bit << 4.
const (
	q5_0Bytes = 22
	q5_0Elems = 32
)

func dequantizeQ5_0(src []byte, dst []float32) {
	for len(dst) > 0 {
		blk := (*[q5_0Bytes]byte)(src)
		y := (*[q5_0Elems]float32)(dst)
		d := half(blk[0:])
		qh := binary.LittleEndian.Uint32(blk[2:])
		for j := 0; j < 16; j++ {
			q := blk[6+j]
			y[j] = d * float32(int(q&15|byte(qh>>j&1)<<4)-16)
			y[j+16] = d * float32(int(q>>4|byte(qh>>(j+16)&1)<<4)-16)
		}
		src, dst = src[q5_0Bytes:], dst[q5_0Elems:]
	}
}

func dotQ5_0(row []byte, x []float32) float32 {
	var sum float32
	for len(x) > 0 {
		blk := (*[q5_0Bytes]byte)(row)
		xs := (*[q5_0Elems]float32)(x)
		// The fifth bits of elements j and j+16 are shifted out of two
		// registers one per step, avoiding a variable shift per element.
		hl := binary.LittleEndian.Uint32(blk[2:])
		hh := hl >> 16
		var lo, hi float32
		for j := 0; j < 16; j++ {
			q := blk[6+j]
			lo += float32(int(q&15|byte(hl&1)<<4)-16) * xs[j]
			hi += float32(int(q>>4|byte(hh&1)<<4)-16) * xs[j+16]
			hl >>= 1
			hh >>= 1
		}
		sum += half(blk[0:]) * (lo + hi)
		row, x = row[q5_0Bytes:], x[q5_0Elems:]
	}
	return sum
}

// quantizeQ5_0 follows quantize_row_q5_0_ref: like Q4_0 with 32 levels.
func quantizeQ5_0(src []float32, dst []byte) {
	for len(src) > 0 {
		x := (*[q5_0Elems]float32)(src)
		blk := (*[q5_0Bytes]byte)(dst)
		d := signedAbsMax(x[:]) / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putHalf(blk[0:], d)
		var qh uint32
		for j := 0; j < 16; j++ {
			lo := clampInt(int(x[j]*id+16.5), 0, 31)
			hi := clampInt(int(x[j+16]*id+16.5), 0, 31)
			blk[6+j] = byte(lo&15) | byte(hi&15)<<4
			qh |= uint32(lo>>4) << j
			qh |= uint32(hi>>4) << (j + 16)
		}
		binary.LittleEndian.PutUint32(blk[2:], qh)
		src, dst = src[q5_0Elems:], dst[q5_0Bytes:]
	}
}

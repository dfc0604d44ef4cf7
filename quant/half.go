package quant

import "github.com/x448/float16"

// halfTable decodes every IEEE binary16 bit pattern; a table load is cheaper
// than the bit manipulation in the F16 dot product's inner loop.
var halfTable = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = float16.Frombits(uint16(i)).Float32()
	}
	return &t
}()

// half decodes the little-endian f16 at b[0:2].
func half(b []byte) float32 { return halfTable[uint16(b[0])|uint16(b[1])<<8] }

// putHalf stores v as a little-endian f16, rounding to nearest even.
func putHalf(b []byte, v float32) {
	h := float16.Fromfloat32(v).Bits()
	b[0], b[1] = byte(h), byte(h>>8)
}

// roundHalf is v after a trip through f16, i.e. what a stored scale decodes to.
func roundHalf(v float32) float32 { return float16.Fromfloat32(v).Float32() }

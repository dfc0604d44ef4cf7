package quant

import (
	"encoding/binary"
	"math"

	"github.com/x448/float16"
)

// Plain float rows: F32 (4 bytes), F16 and BF16 (2 bytes) per element. The
// dot products keep four partial sums so the adds do not wait on each other.

func dequantizeF32(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

func dotF32(row []byte, x []float32) float32 {
	var s0, s1, s2, s3 float32
	for len(x) >= 4 {
		b := (*[16]byte)(row)
		xs := (*[4]float32)(x)
		s0 += math.Float32frombits(binary.LittleEndian.Uint32(b[0:])) * xs[0]
		s1 += math.Float32frombits(binary.LittleEndian.Uint32(b[4:])) * xs[1]
		s2 += math.Float32frombits(binary.LittleEndian.Uint32(b[8:])) * xs[2]
		s3 += math.Float32frombits(binary.LittleEndian.Uint32(b[12:])) * xs[3]
		row, x = row[16:], x[4:]
	}
	for i := range x {
		s0 += math.Float32frombits(binary.LittleEndian.Uint32(row[4*i:])) * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func quantizeF32(src []float32, dst []byte) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func dequantizeF16(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = half(src[2*i:])
	}
}

func dotF16(row []byte, x []float32) float32 {
	var s0, s1, s2, s3 float32
	for len(x) >= 4 {
		b := (*[8]byte)(row)
		xs := (*[4]float32)(x)
		s0 += halfTable[binary.LittleEndian.Uint16(b[0:])] * xs[0]
		s1 += halfTable[binary.LittleEndian.Uint16(b[2:])] * xs[1]
		s2 += halfTable[binary.LittleEndian.Uint16(b[4:])] * xs[2]
		s3 += halfTable[binary.LittleEndian.Uint16(b[6:])] * xs[3]
		row, x = row[8:], x[4:]
	}
	for i := range x {
		s0 += half(row[2*i:]) * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func quantizeF16(src []float32, dst []byte) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], float16.Fromfloat32(v).Bits())
	}
}

// bf16 decodes a bfloat16: the high half of an f32.
func bf16(b []byte) float32 { return math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16) }

func dequantizeBF16(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = bf16(src[2*i:])
	}
}

func dotBF16(row []byte, x []float32) float32 {
	var s0, s1, s2, s3 float32
	for len(x) >= 4 {
		b := (*[8]byte)(row)
		xs := (*[4]float32)(x)
		s0 += bf16(b[0:]) * xs[0]
		s1 += bf16(b[2:]) * xs[1]
		s2 += bf16(b[4:]) * xs[2]
		s3 += bf16(b[6:]) * xs[3]
		row, x = row[8:], x[4:]
	}
	for i := range x {
		s0 += bf16(row[2*i:]) * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// quantizeBF16 rounds to nearest even like ggml's fp32_to_bf16 (Quantize has
// already refused NaN).
func quantizeBF16(src []float32, dst []byte) {
	for i, v := range src {
		u := math.Float32bits(v)
		u += 0x7fff + (u>>16)&1
		binary.LittleEndian.PutUint16(dst[2*i:], uint16(u>>16))
	}
}

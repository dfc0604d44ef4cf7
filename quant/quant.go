// Package quant encodes and decodes ggml tensor blocks: F32, F16, BF16, Q4_0,
// Q5_0, Q8_0, Q4_K, Q5_K, Q6_K and MXFP4. Dequantize and Dot read whole rows;
// Dot is the inner loop of the CPU reference device's matmul, so it works
// block by block on the encoded bytes and applies each scale once per
// sub-block. Quantize is the reference (round-to-nearest) encoder that
// synthetic models and tests use.
package quant

import (
	"fmt"
	"math"

	"github.com/llama-orch/orc/gguf"
)

// codec holds the row-level functions of one block type. Each takes whole
// blocks: len(src) is a multiple of the block bytes and the float side holds
// exactly the elements those blocks encode.
type codec struct {
	dequantize func(src []byte, dst []float32)
	dot        func(row []byte, x []float32) float32
	quantize   func(src []float32, dst []byte) // nil: no reference encoder
}

var codecs = map[gguf.Type]codec{
	gguf.F32:   {dequantizeF32, dotF32, quantizeF32},
	gguf.F16:   {dequantizeF16, dotF16, quantizeF16},
	gguf.BF16:  {dequantizeBF16, dotBF16, quantizeBF16},
	gguf.Q4_0:  {dequantizeQ4_0, dotQ4_0, quantizeQ4_0},
	gguf.Q5_0:  {dequantizeQ5_0, dotQ5_0, quantizeQ5_0},
	gguf.Q8_0:  {dequantizeQ8_0, dotQ8_0, quantizeQ8_0},
	gguf.Q4_K:  {dequantizeQ4_K, dotQ4_K, quantizeQ4_K},
	gguf.Q5_K:  {dequantizeQ5_K, dotQ5_K, nil},
	gguf.Q6_K:  {dequantizeQ6_K, dotQ6_K, quantizeQ6_K},
	gguf.MXFP4: {dequantizeMXFP4, dotMXFP4, quantizeMXFP4},
}

func lookup(t gguf.Type) (codec, error) {
	c, ok := codecs[t]
	if !ok {
		return codec{}, fmt.Errorf("quant: no codec for ggml type %s", t)
	}
	return c, nil
}

// checkSizes reports whether n elements are whole blocks of t that encode to
// exactly nBytes bytes.
func checkSizes(t gguf.Type, nBytes, n int) error {
	if n%t.BlockSize() != 0 {
		return fmt.Errorf("quant: %d elements are not whole %s blocks of %d", n, t, t.BlockSize())
	}
	if want := t.RowBytes(int64(n)); int64(nBytes) != want {
		return fmt.Errorf("quant: %d elements of %s take %d bytes, got %d", n, t, want, nBytes)
	}
	return nil
}

// Dequantize decodes src, whole rows of type t, into dst, which must have
// room for exactly the elements src encodes.
func Dequantize(t gguf.Type, src []byte, dst []float32) error {
	c, err := lookup(t)
	if err != nil {
		return err
	}
	if err := checkSizes(t, len(src), len(dst)); err != nil {
		return err
	}
	c.dequantize(src, dst)
	return nil
}

// Dot returns the dot product of one encoded row of type t with x, without
// materialising the decoded row. The caller guarantees that row encodes
// exactly len(x) elements of a supported type (the CPU device checks shapes
// once when it loads a plan); a violation is a programming error and panics
// with a message naming it.
func Dot(t gguf.Type, row []byte, x []float32) float32 {
	c, ok := codecs[t]
	if !ok {
		panic(fmt.Sprintf("quant.Dot: no codec for ggml type %s", t))
	}
	if err := checkSizes(t, len(row), len(x)); err != nil {
		panic("quant.Dot: " + err.Error())
	}
	return c.dot(row, x)
}

// Quantize encodes src (whole blocks) as type t with the reference
// round-to-nearest encoder of ggml's quantize_row_*_ref.
func Quantize(t gguf.Type, src []float32) ([]byte, error) {
	c, err := lookup(t)
	if err != nil {
		return nil, err
	}
	if c.quantize == nil {
		return nil, fmt.Errorf("quant: no reference encoder for %s", t)
	}
	if len(src)%t.BlockSize() != 0 {
		return nil, fmt.Errorf("quant: %d elements are not whole %s blocks of %d", len(src), t, t.BlockSize())
	}
	for i, v := range src {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("quant: element %d is %v; only finite values can be quantized", i, v)
		}
	}
	dst := make([]byte, t.RowBytes(int64(len(src))))
	c.quantize(src, dst)
	return dst, nil
}

// Encodable reports whether Quantize supports t.
func Encodable(t gguf.Type) bool { c, ok := codecs[t]; return ok && c.quantize != nil }

// nearestInt rounds half to even, as ggml's nearest_int does with its
// float32 magic-number trick.
func nearestInt(f float32) int { return int(math.RoundToEven(float64(f))) }

func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

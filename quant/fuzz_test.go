package quant

import (
	"math"
	"testing"
)

// FuzzDequantize decodes arbitrary bytes as every block type: decoding never
// fails or panics on whole blocks, and where the decoded row is finite the
// fused Dot agrees with it.
func FuzzDequantize(f *testing.F) {
	for _, kb := range knownBlocks() {
		f.Add(kb.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range allTypes {
			n := len(data) / typ.BlockBytes() * typ.BlockSize()
			row := data[:typ.RowBytes(int64(n))]
			y := make([]float32, n)
			if err := Dequantize(typ, row, y); err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			x := make([]float32, n)
			var want, mag float64
			for i := range x {
				x[i] = float32(i%7) - 3
				want += float64(y[i]) * float64(x[i])
				mag += math.Abs(float64(y[i]) * float64(x[i]))
			}
			if math.IsNaN(mag) || math.IsInf(mag, 0) || mag > math.MaxFloat32/2 {
				continue // f32 sums of such rows overflow; nothing to compare
			}
			// Worst-case float32 summation error, n·2^−23 of the magnitude,
			// plus one subnormal step per term for products that underflow.
			tol := mag*0x1p-22*float64(n+8) + float64(n)*0x1p-148
			if got := Dot(typ, row, x); math.Abs(float64(got)-want) > tol {
				t.Fatalf("%s: Dot = %v, dequantized dot = %v (magnitude %v)", typ, got, want, mag)
			}
		}
	})
}

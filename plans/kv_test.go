package plans

import (
	"math"
	"testing"
)

// KVQ8Round keeps each head as int8 codes times its scale amax/127: the
// largest |x| exactly (code ±127), every value within half a step.
func TestKVQ8Round(t *testing.T) {
	src := []float32{0.5, -2, 1.25, 0.01, 0, 0, 0, 0, 3, 3, -3, 1}
	dst := make([]float32, len(src))
	KVQ8Round(dst, src, 4)
	for h := 0; h < len(src); h += 4 {
		amax := float32(0)
		for _, x := range src[h : h+4] {
			amax = max(amax, float32(math.Abs(float64(x))))
		}
		sc := amax / 127
		for i := h; i < h+4; i++ {
			if amax == 0 {
				if dst[i] != 0 {
					t.Errorf("head of zeros: %v", dst[h:h+4])
				}
				continue
			}
			c := dst[i] / sc
			if math.Abs(float64(c)-math.Round(float64(c))) > 1e-3 || math.Abs(float64(dst[i]-src[i])) > float64(sc)/2*1.0001 {
				t.Errorf("x %g stored as %g (step %g)", src[i], dst[i], sc)
			}
		}
	}
	if dst[1] != -2 || dst[8] != 3 || dst[10] != -3 {
		t.Errorf("a head's largest |x| is not kept: %v", dst)
	}
	m := Model{NHeadKV: 2, HeadDim: 64, NLayer: 3}
	if m.KVRowBytes() != 256 || m.KVBytes(10) != 3*2*10*256 {
		t.Errorf("fp16 rows %d B", m.KVRowBytes())
	}
	m.KVCache = KVCacheQ8
	if m.KVRowBytes() != 144 { // 128 codes + 8 bytes of scales, to 16
		t.Errorf("q8 rows %d B, want 144", m.KVRowBytes())
	}
}

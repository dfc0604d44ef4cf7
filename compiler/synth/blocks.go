package synth

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/quant"
	"github.com/x448/float16"
)

// Synthetic weights are random but well scaled, so activations stay finite
// through every layer: matrices have std ≈ weightStd (the usual init), norm
// weights are ≈ 1, biases small. Quantized tensors are drawn as random codes
// with scales chosen for that std, which is far faster than quantizing floats
// and exercises every code.
const weightStd = 0.02

// role is how a tensor's values are drawn.
type role int

const (
	roleWeight role = iota // N(0, weightStd)
	roleNorm               // 1 + U(-0.1, 0.1)
	roleBias               // N(0, weightStd)
	roleSinks              // N(0, 1): per-head attention sink logits
)

func roleOf(name string) role {
	switch {
	case strings.Contains(name, "_norm.weight"):
		return roleNorm
	case strings.Contains(name, "attn_sinks"):
		return roleSinks
	case strings.HasSuffix(name, ".bias"):
		return roleBias
	}
	return roleWeight
}

func (r role) sample(rng *rand.Rand) float32 {
	switch r {
	case roleNorm:
		return float32(1 + 0.2*(rng.Float64()-0.5))
	case roleSinks:
		return float32(rng.NormFloat64())
	}
	return float32(weightStd * rng.NormFloat64())
}

// fill writes random encoded data of type t into dst (whole blocks).
func fill(t gguf.Type, r role, dst []byte, rng *rand.Rand, src *rand.ChaCha8) error {
	if t == gguf.F32 || t == gguf.F16 || t == gguf.BF16 {
		vals := make([]float32, len(dst)/int(t.RowBytes(1)))
		for i := range vals {
			vals[i] = r.sample(rng)
		}
		enc, err := quant.Quantize(t, vals)
		if err != nil {
			return err
		}
		copy(dst, enc)
		return nil
	}
	// Quantized: random codes everywhere, then each block's scales.
	src.Read(dst)
	n := t.BlockBytes()
	for off := 0; off+n <= len(dst); off += n {
		blockScales(t, dst[off:off+n], rng)
	}
	return nil
}

// Code statistics used to pick scales: the std of a uniformly random code.
const (
	std4  = 4.6098 // 16 levels
	std5  = 9.2331 // 32 levels
	std6  = 18.473 // 64 levels
	std8  = 73.901 // int8
	rmsSc = 48.3   // rms of a 6-bit sub-block scale drawn from [32, 63]
	rmsQ6 = 24.0   // rms of a Q6_K int8 scale drawn from ±[16, 31]
)

func putF16(b []byte, x float64) {
	binary.LittleEndian.PutUint16(b, float16.Fromfloat32(float32(x)).Bits())
}

// randSign is ±1: a block scale's sign flips its codes' −0.5 mean away.
func randSign(rng *rand.Rand) float64 { return float64(rng.IntN(2)*2 - 1) }

func blockScales(t gguf.Type, b []byte, rng *rand.Rand) {
	switch t {
	case gguf.Q4_0: // d, qs[16]
		putF16(b, randSign(rng)*weightStd/std4)
	case gguf.Q5_0: // d, qh[4], qs[16]
		putF16(b, randSign(rng)*weightStd/std5)
	case gguf.Q8_0: // d, qs[32]
		putF16(b, randSign(rng)*weightStd/std8)
	case gguf.Q4_K: // d, dmin, scales[12], qs[128]
		kScales(b, rng, weightStd/(std4*rmsSc), 8, 7.5)
	case gguf.Q5_K: // d, dmin, scales[12], qh[32], qs[128]
		kScales(b, rng, weightStd/(std5*rmsSc), 16, 15.5)
	case gguf.Q6_K: // ql[128], qh[64], scales[16] int8, d
		for i := 0; i < 16; i++ {
			b[192+i] = byte(int8(randSign(rng) * float64(16+rng.IntN(16))))
		}
		putF16(b[208:], weightStd/(std6*rmsQ6))
	case gguf.MXFP4: // e8m0 exponent, qs[16]: 2^-7 scales E2M1 codes (std 2.93) to ≈ 0.02
		b[0] = 120
		if rng.IntN(4) == 0 {
			b[0] = 119
		}
	}
}

// kScales writes d, dmin and the packed 6-bit scales/mins of a Q4_K/Q5_K
// block: value = d·sc·q − dmin·m, with dmin = ratio·d and m chosen so that
// dmin·m ≈ d·sc·mid, centring the codes 0..2·mid on zero.
func kScales(b []byte, rng *rand.Rand, d, ratio, mid float64) {
	putF16(b[0:], d)
	putF16(b[2:], d*ratio)
	var sc, m [8]uint8
	for j := range sc {
		sc[j] = uint8(32 + rng.IntN(32))
		m[j] = uint8(math.Round(float64(sc[j]) * mid / ratio))
	}
	s := b[4:16]
	for j := 0; j < 4; j++ {
		s[j] = sc[j]&63 | (sc[j+4]>>4)<<6
		s[j+4] = m[j]&63 | (m[j+4]>>4)<<6
		s[j+8] = sc[j+4]&15 | (m[j+4]&15)<<4
	}
}

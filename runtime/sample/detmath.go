package sample

import "math"

// The draw's arithmetic is written out here with IEEE float32 operations
// alone (add, subtract, multiply, divide, floor, bit moves), each rounded on
// its own, so that the GPU's sampler (codegen/cuda/templates/sample.cu.tmpl,
// which spells each with __fadd_rn, __fmul_rn and friends, which nvcc never
// fuses) computes every weight and every noise value bit for bit as this
// file does. mul wraps every product: Go may fuse x*y + z into one rounding
// unless a conversion rounds the product first.

func mul(a, b float32) float32 { return float32(a * b) }

// Constants as bit patterns, the same words the CUDA template spells.
var (
	ln2   = math.Float32frombits(0x3F317218) // ln 2
	ln2hi = math.Float32frombits(0x3F317200) // ln 2 to 16 bits: n·ln2hi is exact for |n| < 2⁸
	ln2lo = math.Float32frombits(0x35BFBE8E) // ln 2 − ln2hi
	log2e = math.Float32frombits(0x3FB8AA3B) // 1/ln 2
	sqrt2 = math.Float32frombits(0x3FB504F3) // √2
	// 1/3, 1/5, 1/7, 1/9: ln(1+f) = 2s(1 + s²/3 + s⁴/5 + s⁶/7 + s⁸/9), s = f/(2+f)
	lnC = [4]float32{math.Float32frombits(0x3EAAAAAB), math.Float32frombits(0x3E4CCCCD),
		math.Float32frombits(0x3E124925), math.Float32frombits(0x3DE38E39)}
	// 1/2 … 1/5040: e^r = 1 + r(1 + r(1/2 + r(1/6 + … + r/5040)))
	expC = [6]float32{0.5, math.Float32frombits(0x3E2AAAAB), math.Float32frombits(0x3D2AAAAB),
		math.Float32frombits(0x3C088889), math.Float32frombits(0x3AB60B61), math.Float32frombits(0x39500D01)}
)

// ln32 is the natural logarithm of a positive normal float32, to a few ulp.
func ln32(x float32) float32 {
	b := math.Float32bits(x)
	e := int32(b>>23) - 127
	m := math.Float32frombits(b&0x7FFFFF | 0x3F800000) // [1, 2)
	if m > sqrt2 {
		m = mul(m, 0.5)
		e++
	}
	f := m - 1 // exact
	s := f / (2 + f)
	s2 := mul(s, s)
	p := lnC[3]
	for i := 2; i >= 0; i-- {
		p = mul(p, s2) + lnC[i]
	}
	p = mul(p, s2) + 1
	return mul(float32(e), ln2) + mul(s+s, p)
}

// exp32 is e^d for d ≤ 0, to a few ulp; 0 below −87 (no subnormal results),
// so also for −Inf.
func exp32(d float32) float32 {
	if !(d > -87) {
		return 0
	}
	n := float32(math.Floor(float64(mul(d, log2e) + 0.5)))
	r := d - mul(n, ln2hi) - mul(n, ln2lo)
	p := expC[5]
	for i := 4; i >= 0; i-- {
		p = mul(p, r) + expC[i]
	}
	p = mul(p, r) + 1
	p = mul(p, r) + 1
	return mul(p, math.Float32frombits(uint32(int32(n)+127)<<23))
}

const golden64 = 0x9E3779B97F4A7C15

// mix64 is splitmix64's finaliser (Steele, Lea and Flood, 2014): a bijection
// of 64-bit words whose outputs pass BigCrush as a counter-based generator.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// StepKey is the key of the draw at position pos of a request seeded with
// seed: every id's noise is a function of the key and the id alone.
func StepKey(seed uint64, pos int) uint64 {
	return mix64(mix64(seed+golden64) + uint64(pos)*golden64)
}

// gumbel is id's noise in the draw keyed by key: −ln(−ln u) for u uniform in
// (0, 1) on a grid of 2⁻²³ (23 bits of the id's hash, plus one half).
func gumbel(key uint64, id int32) float32 {
	h := mix64(key + uint64(id+1)*golden64)
	u := mul(float32(h>>41)+0.5, 0x1p-23)
	return -ln32(-ln32(u))
}

// orderedBits maps a float32 to a uint32 whose unsigned order is the float
// order (negative values reversed; −0 maps as +0, since they compare equal).
// NaN never reaches it: the sampler reads NaN as −Inf.
func orderedBits(f float32) uint32 {
	if f == 0 {
		f = 0
	}
	b := math.Float32bits(f)
	if b&(1<<31) != 0 {
		return ^b
	}
	return b | 1<<31
}

// drawKey orders candidates of a draw: the larger value, then the lower id.
func drawKey(v float32, id int32) uint64 {
	return uint64(orderedBits(v))<<32 | uint64(0xFFFFFFFF-uint32(id))
}

// KeyID is the id a drawKey (or the GPU's key of the same layout) names.
func KeyID(key uint64) int32 { return int32(0xFFFFFFFF - uint32(key)) }

// massOne is the fixed-point scale of a candidate's mass: its weight (at
// most 1) times 2³¹, truncated. Integer masses sum to the same total in any
// order, so the GPU's parallel sums are the CPU's exactly; a vocabulary of
// 2²³ stays below 2⁵⁴, and a mass splits into two 16-bit halves that the
// GPU sums with 32-bit atomics.
const massOne = 1 << 31

func mass(w float32) uint64 { return uint64(mul(w, massOne)) }

package sample

// rng is xorshift64* (Vigna, "An experimental exploration of Marsaglia's
// xorshift generators, scrambled", 2016) seeded through one splitmix64 step,
// so that every seed, 0 included, gives a non-zero state. It is written out
// here rather than taken from math/rand so that the GPU sampler can
// reproduce the exact stream:
//
//	seed:  z = seed + 0x9E3779B97F4A7C15
//	       z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
//	       z = (z ^ z>>27) * 0x94D049BB133111EB
//	       state = z ^ z>>31; if state == 0 { state = 0x9E3779B97F4A7C15 }
//	next:  x ^= x>>12; x ^= x<<25; x ^= x>>27; state = x
//	       return x * 0x2545F4914F6CDD1D
//	float: (next() >> 11) * 2⁻⁵³, uniform in [0, 1)
type rng struct{ state uint64 }

const golden64 = 0x9E3779B97F4A7C15

func newRNG(seed uint64) rng {
	z := seed + golden64
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	z ^= z >> 31
	if z == 0 {
		z = golden64
	}
	return rng{state: z}
}

func (r *rng) next() uint64 {
	x := r.state
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	r.state = x
	return x * 0x2545F4914F6CDD1D
}

// float64 returns a uniform draw in [0, 1) with 53 random bits.
func (r *rng) float64() float64 { return float64(r.next()>>11) * (1.0 / (1 << 53)) }

package quant

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llama-orch/orc/gguf"
)

var allTypes = []gguf.Type{gguf.F32, gguf.F16, gguf.BF16, gguf.Q4_0, gguf.Q5_0, gguf.Q8_0, gguf.Q4_K, gguf.Q5_K, gguf.Q6_K, gguf.MXFP4}

// gaussian returns n normal values of the given std, seeded so a failure
// reproduces.
func gaussian(seed uint64, n int, std float64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * std)
	}
	return x
}

// randomRow encodes n elements of t: quantized normal values where an
// encoder exists, otherwise random codes under sane f16 scales.
func randomRow(t testing.TB, typ gguf.Type, seed uint64, n int) []byte {
	if Encodable(typ) {
		row, err := Quantize(typ, gaussian(seed, n, 1))
		if err != nil {
			t.Fatal(err)
		}
		return row
	}
	r := rand.New(rand.NewPCG(seed, 2))
	row := make([]byte, typ.RowBytes(int64(n)))
	for i := range row {
		row[i] = byte(r.Uint32())
	}
	if typ == gguf.Q5_K {
		// d and dmin lead each block; keep them finite and small.
		for b := 0; b < len(row); b += typ.BlockBytes() {
			putHalf(row[b:], 0.01*r.Float32())
			putHalf(row[b+2:], 0.01*r.Float32())
		}
	}
	return row
}

// TestDotMatchesDequantize checks the fused dot product of every type
// against the dequantized row times x, summed in float64.
func TestDotMatchesDequantize(t *testing.T) {
	const n = 1024
	x := gaussian(7, n, 1)
	for _, typ := range allTypes {
		for seed := uint64(0); seed < 4; seed++ {
			row := randomRow(t, typ, seed, n)
			y := make([]float32, n)
			if err := Dequantize(typ, row, y); err != nil {
				t.Fatal(err)
			}
			var want, mag float64
			for i := range y {
				want += float64(y[i]) * float64(x[i])
				mag += math.Abs(float64(y[i]) * float64(x[i]))
			}
			got := Dot(typ, row, x)
			if math.Abs(float64(got)-want) > 1e-5*mag {
				t.Errorf("%s seed %d: Dot = %v, dequantized dot = %v (magnitude %v)", typ, seed, got, want, mag)
			}
		}
	}
}

// TestRoundTripError quantizes normal data and bounds the reconstruction
// error: per element where the format makes it exact to state, as a
// relative RMS error for the fitted K-quants.
func TestRoundTripError(t *testing.T) {
	const n = 4096
	x := gaussian(3, n, 0.02)
	// A block with one outlier and one all-zero block test the scale choice.
	x[100] = 0.5
	for i := 256; i < 512; i++ {
		x[i] = 0
	}
	for _, typ := range allTypes {
		if !Encodable(typ) {
			continue
		}
		enc, err := Quantize(typ, x)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(enc)) != typ.RowBytes(n) {
			t.Fatalf("%s: %d bytes, want %d", typ, len(enc), typ.RowBytes(n))
		}
		y := make([]float32, n)
		if err := Dequantize(typ, enc, y); err != nil {
			t.Fatal(err)
		}
		bs := typ.BlockSize()
		var errSq, sq float64
		for i := range x {
			e := math.Abs(float64(y[i] - x[i]))
			errSq += e * e
			sq += float64(x[i]) * float64(x[i])
			if bound := elementBound(typ, enc[i/bs*typ.BlockBytes():], x[i]); e > bound {
				t.Fatalf("%s element %d: %v decodes to %v, error %g > bound %g", typ, i, x[i], y[i], e, bound)
			}
			if x[i] == 0 && y[i] != 0 {
				t.Fatalf("%s element %d: 0 decodes to %v", typ, i, y[i])
			}
		}
		rel := math.Sqrt(errSq / sq)
		if limit := relRMSLimit[typ]; rel > limit {
			t.Errorf("%s: relative RMS error %.4f > %.4f", typ, rel, limit)
		}
		t.Logf("%s: relative RMS error %.5f", typ, rel)
	}
}

// relRMSLimit is the largest acceptable relative RMS error on the test data
// (normal, std 0.02, with one 25σ outlier that coarsens its block): about
// 20 % above what was measured (see the -v log), so a wrong rounding rule or
// scale choice shows while float noise does not.
var relRMSLimit = map[gguf.Type]float64{
	gguf.F32: 0, gguf.F16: 0.00025, gguf.BF16: 0.002, gguf.Q8_0: 0.0085, gguf.Q6_K: 0.026,
	gguf.Q5_0: 0.065, gguf.Q4_0: 0.13, gguf.Q4_K: 0.095, gguf.MXFP4: 0.16,
}

// elementBound is the largest error one element x may have, given the block
// that encodes it.
func elementBound(typ gguf.Type, blk []byte, x float32) float64 {
	ax := math.Abs(float64(x))
	switch typ {
	case gguf.F32:
		return 0
	case gguf.F16:
		return ax*0x1p-11 + 0x1p-25 // half an ulp, or half the smallest subnormal
	case gguf.BF16:
		return ax * 0x1p-8
	case gguf.Q8_0:
		// Half a step, plus the f16 rounding of d carried through |code| ≤ 127.
		return math.Abs(float64(half(blk)))*0.5 + ax*0x1p-10
	case gguf.Q4_0, gguf.Q5_0:
		// The largest positive values may clip one code short: a whole step.
		return math.Abs(float64(half(blk)))*1.0001 + ax*0x1p-10
	case gguf.MXFP4:
		// Nothing clips (the max fits in 6); the widest gap, 4 to 6, is 2 scales.
		return float64(e8m0(blk[0])) * 1.0001
	}
	return math.Inf(1) // the K-quants fit scales by least squares: the RMS limit applies
}

func TestMXFP4Exponent(t *testing.T) {
	for _, c := range []struct {
		amax float32
		e    byte
	}{{6, 127}, {6.01, 128}, {3, 126}, {5.99, 127}, {12, 128}, {0.75, 124}, {0, 0}, {1e-40, 0}} {
		if e := mxfp4Exponent(c.amax); e != c.e {
			t.Errorf("mxfp4Exponent(%v) = %d, want %d", c.amax, e, c.e)
		}
	}
}

// TestQuantizeKnownCodes checks the reference encoders on inputs whose codes
// are worked out by hand.
func TestQuantizeKnownCodes(t *testing.T) {
	ramp := make([]float32, 32) // −16 … 15
	for i := range ramp {
		ramp[i] = float32(i - 16)
	}
	// Q8_0: d = 16/127; code = round(x·127/16): −16 → −127, −15 → round(−119.06) = −119,
	// 1 → round(7.94) = 8, 2 → round(15.875) = 16, 15 → round(119.06) = 119.
	q8, _ := Quantize(gguf.Q8_0, ramp)
	for i, want := range map[int]int8{0: -127, 1: -119, 17: 8, 18: 16, 31: 119, 16: 0} {
		if got := int8(q8[2+i]); got != want {
			t.Errorf("Q8_0 code %d = %d, want %d", i, got, want)
		}
	}
	if d := half(q8); d != roundHalf(16.0/127) {
		t.Errorf("Q8_0 d = %v", d)
	}
	// Q4_0: the largest magnitude is −16 (element 0), so d = −16/−8 = 2, id = 0.5;
	// code = min(15, trunc(x·0.5 + 8.5)): −16 → 0, −15 → 1, −1 → 8, 0 → 8, 1 → 9, 15 → 16 → 15.
	q4, _ := Quantize(gguf.Q4_0, ramp)
	code := func(i int) byte { return q4[2+i%16] >> (4 * (i / 16)) & 15 }
	for i, want := range map[int]byte{0: 0, 1: 1, 15: 8, 16: 8, 17: 9, 31: 15} {
		if got := code(i); got != want {
			t.Errorf("Q4_0 code of element %d = %d, want %d", i, got, want)
		}
	}
	if d := half(q4); d != 2 {
		t.Errorf("Q4_0 d = %v, want 2", d)
	}
	// MXFP4 of 3·ramp/16 (max |x| = 3): e = 126 (scale 0.5); −3 → code 15 (−6·0.5),
	// element 17 (0.1875) → nearest of 0, 0.25 is 0.25 = code 1 (0.5·0.5).
	scaled := make([]float32, 32)
	for i := range scaled {
		scaled[i] = ramp[i] * 3 / 16
	}
	mx, _ := Quantize(gguf.MXFP4, scaled)
	if mx[0] != 126 || mx[1]&15 != 15 || mx[2]>>4 != 1 {
		t.Errorf("MXFP4 block % x", mx)
	}
}

func TestBadInput(t *testing.T) {
	dst := make([]float32, 32)
	for _, c := range []struct {
		err  error
		want string
	}{
		{Dequantize(gguf.Q4_0, make([]byte, 17), dst), "take 18 bytes, got 17"},
		{Dequantize(gguf.Q4_K, make([]byte, 144), dst), "32 elements are not whole Q4_K blocks of 256"},
		{Dequantize(gguf.Type(3), nil, nil), "no codec for ggml type type(3)"},
		{errOf(Quantize(gguf.Q5_K, make([]float32, 256))), "no reference encoder for Q5_K"},
		{errOf(Quantize(gguf.Q8_0, make([]float32, 31))), "31 elements are not whole Q8_0 blocks"},
		{errOf(Quantize(gguf.F16, []float32{1, float32(math.NaN())})), "element 1 is NaN"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", c.err, c.want)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "take 34 bytes, got 33") {
			t.Errorf("Dot on a short row: recovered %v", r)
		}
	}()
	Dot(gguf.Q8_0, make([]byte, 33), dst)
}

func errOf(_ []byte, err error) error { return err }

// BenchmarkDot measures one 4096-element row per type (a Phi-3 hidden row).
func BenchmarkDot(b *testing.B) {
	const n = 4096
	x := gaussian(1, n, 1)
	for _, typ := range allTypes {
		row := randomRow(b, typ, 5, n)
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(row)))
			var sink float32
			for b.Loop() {
				sink += Dot(typ, row, x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem")
			_ = sink
		})
	}
}

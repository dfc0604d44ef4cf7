package cuda_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
)

// TestGPUSwiGLUStreams runs Phi-3-mini's decode SwiGLU, which streams its
// rows through shared memory (stream_rows), in every layout that streams,
// against a float64 reference: gate and up random slabs tiled to [8192,
// 3072], the step time logged (embed, quantize_x8 and the SwiGLU).
func TestGPUSwiGLUStreams(t *testing.T) {
	gpuOnly(t)
	r := rand.New(rand.NewPCG(9, 10))
	const slab, tok = 64, 1
	for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K} {
		dt, _ := ir.ParseDType(strings.ToLower(gt.String()))
		gRows, gDeq := randomSlab(t, r, gt, slab*streamIn)
		uRows, uDeq := randomSlab(t, r, gt, slab*streamIn)
		table := make([]float32, 4*streamIn)
		for i := range table {
			table[i] = float32(r.NormFloat64())
		}
		wg, wu := tile(gRows, streamF/slab), tile(uRows, streamF/slab)
		data := func(name string) []byte {
			return map[string][]byte{"table": f32Bytes(table), "wg": wg, "wu": wu}[name]
		}
		x := table[tok*streamIn : (tok+1)*streamIn]
		dot := func(deq []float32, o int) float64 {
			var s float64
			for i, w := range deq[(o%slab)*streamIn : (o%slab+1)*streamIn] {
				s += float64(w) * float64(x[i])
			}
			return s
		}
		want := make([]float32, streamF)
		for o := range want {
			g := dot(gDeq, o)
			want[o] = float32(g / (1 + math.Exp(-g)) * dot(uDeq, o))
		}
		g, man := swigluGraph(t, dt, streamF, streamIn, int64(len(wg)))
		out, err := cuda.Generate(g, man, cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		l := streamedSwiGLU(t, out, dt)
		dev := openGPUPlan(t, g, man, 16, data)
		step, got := timeDecode(t, dev, tok+1, tok)
		dev.Close()
		e := relErr(got, want)
		t.Logf("%-5s %s: step %.1f µs, relative error %.1e", gt, l.Kernel, float64(step.Nanoseconds())/1e3, e)
		if e > 2*gemvTolerance(gt) { // two GEMVs' roundings, multiplied
			t.Errorf("%s SwiGLU: relative error %.2e", gt, e)
		}
	}
}

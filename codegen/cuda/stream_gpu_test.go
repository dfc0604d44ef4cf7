package cuda_test

import (
	"context"
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
		h := newGatedHarness(t, r, gt, slab, streamIn, streamF)
		want := h.want(tok, func(g float64) float64 { return g / (1 + math.Exp(-g)) })
		g, man := swigluGraph(t, dt, streamF, streamIn, int64(len(h.wg)))
		out, err := cuda.Generate(g, man, cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		l := streamedSwiGLU(t, out, dt)
		dev := openGPUPlan(t, g, man, 16, h.data)
		step, got := timeDecode(t, dev, tok+1, tok)
		dev.Close()
		e := relErr(got, want)
		t.Logf("%-5s %s: step %.1f µs, relative error %.1e", gt, l.Kernel, float64(step.Nanoseconds())/1e3, e)
		if e > 2*gemvTolerance(gt) { // two GEMVs' roundings, multiplied
			t.Errorf("%s SwiGLU: relative error %.2e", gt, e)
		}
	}
}

// TestGPUQKVOnTensorCores runs decode qkvs on the tensor cores (qkv_mma)
// against a float64 reference: Phi-3-mini's (Q5_K, NeoX), Llama-3.1-8B's
// (grouped k and v, Q4_K q and k, Q6_K v, normal RoPE) and Qwen3-8B's
// (Llama-3.1's without RoPE), random slabs tiled to each part's rows over
// rows of 3072, the second token of a sequence (position 1, so that q and
// k turn), each part checked in its own plan.
func TestGPUQKVOnTensorCores(t *testing.T) {
	gpuOnly(t)
	for name, s := range map[string]qkvShape{"phi-3": phi3QKV, "llama-3.1": llama3QKV, "qk-norm": qkNormQKV} {
		t.Run(name, func(t *testing.T) { checkGPUQKV(t, s) })
	}
}

func checkGPUQKV(t *testing.T, s qkvShape) {
	const slab, tok = 64, 1
	parts := []int{int(s.heads * s.hd), int(s.kvHeads * s.hd), int(s.vRows)}
	r := rand.New(rand.NewPCG(11, 12))
	table := make([]float32, 4*streamIn)
	for i := range table {
		table[i] = float32(r.NormFloat64())
	}
	x := table[tok*streamIn : (tok+1)*streamIn]
	data := map[string][]byte{"table": f32Bytes(table)}
	var want [3][]float64
	for p, name := range []string{"wq", "wk", "wv"} {
		gt, _ := gguf.TypeByName(s.types[p].String())
		rows, deq := randomSlab(t, r, gt, slab*streamIn)
		data[name] = tile(rows, parts[p]/slab)
		want[p] = make([]float64, parts[p])
		for o := range want[p] {
			for i, w := range deq[(o%slab)*streamIn : (o%slab+1)*streamIn] {
				want[p][o] += float64(w) * float64(x[i])
			}
		}
		if p < 2 && s.rope != "" { // at position 1, pair i of each head turns by 10000^(-2i/hd)
			hd := int(s.hd)
			for h := 0; h < parts[p]/hd; h++ {
				for i := 0; i < hd/2; i++ {
					sn, c := math.Sincos(math.Pow(10000, -2*float64(i)/float64(hd)))
					a, b := &want[p][h*hd+2*i], &want[p][h*hd+2*i+1]
					if s.rope == "neox" {
						a, b = &want[p][h*hd+i], &want[p][h*hd+i+hd/2]
					}
					*a, *b = *a*c-*b*sn, *a*sn+*b*c
				}
			}
		}
	}
	for p := range want {
		g, man := qkvGraph(t, s, int64(p))
		out, err := cuda.Generate(g, man, cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		l := qkvLaunch(t, out)
		dev := openGPUPlan(t, g, man, 16, func(name string) []byte { return data[name] })
		seq, err := dev.NewSequence(16)
		if err != nil {
			t.Fatal(err)
		}
		var got []float32
		for _, id := range []int32{0, tok} {
			if got, err = seq.Forward(context.Background(), []int32{id}); err != nil {
				t.Fatal(err)
			}
		}
		e := relErr64(got, want[p]) // before Close: got is the device's output buffer
		seq.Close()
		dev.Close()
		gt, _ := gguf.TypeByName(s.types[p].String())
		t.Logf("part %d (%s), %s: relative error %.1e", p, gt, l.Kernel, e)
		if e > gemvTolerance(gt) {
			t.Errorf("qkv part %d: relative error %.2e", p, e)
		}
	}
}

package cuda_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// A small gpt-oss-like attention: 8 heads of 64 over 2 KV heads, sinks.
const attH, attKVH, attHD, attVocab = 8, 2, 64, 16

// attentionGraph is x = embed(table, tokens) split into q, k, v, then
// attention(q, k, v, sinks){window}; the logits are its last row.
func attentionGraph(t *testing.T, window int64) (*ir.Graph, *plans.Manifest) {
	t.Helper()
	const qw, kw = attH * attHD, attKVH * attHD
	g := ir.New()
	g.Attrs["max_tokens"] = int64(8)
	man := &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model: plans.Model{Name: "attention", Arch: "attention", NLayer: 1, NHead: attH, NHeadKV: attKVH, HeadDim: attHD,
			Vocab: qw, ContextLength: 16},
		Memory: plans.Memory{MaxTokens: 8, KVBytesPerToken: 2 * kw * 2},
		Tensors: []plans.Tensor{
			{Name: "table", DType: "f32", Shape: []int64{attVocab, qw + 2*kw}, Bytes: 4 * attVocab * (qw + 2*kw)},
			{Name: "sinks", DType: "f32", Shape: []int64{attH}, Bytes: 4 * attH},
		}}
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	tab := g.Add(ir.OpWeight, ir.F32, ir.Shape{attVocab, qw + 2*kw}, map[string]any{"name": "table"})
	x := g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, qw + 2*kw}, nil, tab, tok)
	sp := g.Add(ir.OpSplit, ir.F32, ir.Shape{ir.T, qw + 2*kw}, map[string]any{"parts": []int64{qw, kw, kw}}, x)
	var qkv [3]*ir.Node
	for i, w := range []int64{qw, kw, kw} {
		qkv[i] = g.Add(ir.OpView, ir.F32, ir.Shape{ir.T, w}, map[string]any{"part": int64(i)}, sp)
	}
	sinks := g.Add(ir.OpWeight, ir.F32, ir.Shape{attH}, map[string]any{"name": "sinks"})
	att := g.Add(ir.OpAttention, ir.F32, ir.Shape{ir.T, qw}, map[string]any{"layer": int64(0), "heads": int64(attH),
		"kv_heads": int64(attKVH), "head_dim": int64(attHD), "scale": 0.125, "window": window}, qkv[0], qkv[1], qkv[2], sinks)
	g.Outputs = []*ir.Node{g.Add(ir.OpLast, ir.F32, ir.Shape{1, qw}, nil, att)}
	runGPUPasses(t, g, man)
	return g, man
}

// attentionReference is the attention output of the token at position p of
// toks in float64: causal (the last window positions when window > 0),
// softmax with the head's sink in the denominator.
func attentionReference(table, sinks []float32, toks []int32, p int, window int) []float32 {
	const c = (attH + 2*attKVH) * attHD
	row := func(tok int32, off, h int) []float32 {
		return table[int(tok)*c+off+h*attHD : int(tok)*c+off+(h+1)*attHD]
	}
	first := 0
	if window > 0 {
		first = max(0, p-window+1)
	}
	out := make([]float32, attH*attHD)
	for h := range attH {
		kvh := h / (attH / attKVH)
		q := row(toks[p], 0, h)
		scores := make([]float64, 0, p+1)
		top := float64(sinks[h])
		for j := first; j <= p; j++ {
			k := row(toks[j], attH*attHD, kvh)
			var s float64
			for d := range attHD {
				s += float64(q[d]) * float64(k[d])
			}
			scores = append(scores, s*0.125)
			top = max(top, s*0.125)
		}
		denom := math.Exp(float64(sinks[h]) - top)
		acc := make([]float64, attHD)
		for i, s := range scores {
			e := math.Exp(s - top)
			denom += e
			v := row(toks[first+i], (attH+attKVH)*attHD, kvh)
			for d := range attHD {
				acc[d] += e * float64(v[d])
			}
		}
		for d := range attHD {
			out[h*attHD+d] = float32(acc[d] / denom)
		}
	}
	return out
}

// TestGPUAttention is the spec's small-attention micro-golden: a 7-token
// prefill then 3 decode steps through the fp16 KV cache, with sinks, full
// and with a 4-position sliding window, against the float64 reference
// within 1 % of the largest output.
func TestGPUAttention(t *testing.T) {
	gpuOnly(t)
	r := rand.New(rand.NewPCG(9, 10))
	table, sinks := normals(r, attVocab*(attH+2*attKVH)*attHD, 1), normals(r, attH, 1)
	data := func(name string) []byte {
		if name == "sinks" {
			return f32Bytes(sinks)
		}
		return f32Bytes(table)
	}
	for _, window := range []int64{0, 4} {
		g, man := attentionGraph(t, window)
		dev := openGPUPlan(t, g, man, 16, data)
		seq, err := dev.NewSequence(16)
		if err != nil {
			t.Fatal(err)
		}
		var toks []int32
		for _, in := range [][]int32{{3, 1, 4, 1, 5, 9, 2}, {6}, {5}, {3}} {
			got, err := seq.Forward(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			toks = append(toks, in...)
			e := relErr(got, attentionReference(table, sinks, toks, len(toks)-1, int(window)))
			t.Logf("window %d, position %d: relative error %.2e", window, len(toks)-1, e)
			if e > 1e-2 {
				t.Errorf("window %d, position %d: relative error %.2e", window, len(toks)-1, e)
			}
		}
		seq.Close()
		dev.Close()
	}
}

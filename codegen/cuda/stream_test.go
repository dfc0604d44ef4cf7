package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// Phi-3-mini's SwiGLU, 3072 → 2 × 8192: the decode kernel that streams its
// weight rows (ops_stream.go).
const streamF, streamIn = 8192, 3072

// swigluGraph is x = embed(table, tokens); y = swiglu_linear(x, wg, wu), wg
// and wu [f, in] of dtype dt (wbytes each); the logits are last(y).
func swigluGraph(t *testing.T, dt ir.DType, f, in, wbytes int64) (*ir.Graph, *plans.Manifest) {
	t.Helper()
	g, x, man := tableGraph("swiglu", in, f)
	wg := g.Add(ir.OpWeight, dt, ir.Shape{f, in}, map[string]any{"name": "wg"})
	wu := g.Add(ir.OpWeight, dt, ir.Shape{f, in}, map[string]any{"name": "wu"})
	y := g.Add(ir.OpSwiGLULinear, ir.F32, ir.Shape{ir.T, f}, nil, x, wg, wu)
	g.Outputs = []*ir.Node{g.Add(ir.OpLast, ir.F32, ir.Shape{1, f}, nil, y)}
	for _, w := range []string{"wg", "wu"} {
		man.Tensors = append(man.Tensors, plans.Tensor{Name: w, DType: dt.String(), Shape: []int64{f, in}, Bytes: wbytes})
	}
	runGPUPasses(t, g, man)
	return g, man
}

// streamedSwiGLU returns the decode launch of the SwiGLU in out's schedule,
// failing unless it streams: a grid of two blocks an SM (of 132) and two
// stages of 8 gate and 8 up rows of 12 blocks, each section padded (144 ×
// 12 × 8 + 16 bytes for Q4_K, whose GGUF order is one section).
func streamedSwiGLU(t *testing.T, out *cuda.Output, dt ir.DType) plans.Launch {
	t.Helper()
	want := map[ir.DType]int{ir.Q4_K: 2 * 2 * (144*96 + 16), ir.Q5_K: 2 * 2 * (128*96 + 32*96 + 16*96 + 3*16), ir.Q6_K: 2 * 2 * (192*96 + 16*96 + 16 + 2*96 + 16 + 16)}[dt]
	for _, l := range out.Kernels.Decode {
		if !strings.HasPrefix(l.Kernel, "swiglu_q8") && !strings.HasPrefix(l.Kernel, "swiglu_mma") {
			continue
		}
		if l.Smem != want || l.GridB[0] != 2*132 {
			t.Fatalf("%s: %d bytes of stages in %d blocks, want %d in 264", l.Kernel, l.Smem, l.GridB[0], want)
		}
		return l
	}
	t.Fatal("no swiglu_q8 launch in the decode schedule")
	return plans.Launch{}
}

// TestStreamedSwiGLU: Phi-3-mini's decode SwiGLU streams in each layout
// that can, the prefill's does not, and the emitted source matches its
// golden and compiles with nvcc for sm_80 and sm_90 (cp.async, no
// programmatic launch on sm_80).
func TestStreamedSwiGLU(t *testing.T) {
	for _, dt := range []ir.DType{ir.Q4_K, ir.Q5_K, ir.Q6_K} {
		t.Run(dt.String(), func(t *testing.T) {
			gt, _ := gguf.TypeByName(dt.String())
			g, man := swigluGraph(t, dt, streamF, streamIn, streamF*gt.RowBytes(streamIn))
			out, err := cuda.Generate(g, man, cuda.Options{})
			if err != nil {
				t.Fatal(err)
			}
			streamedSwiGLU(t, out, dt)
			for _, l := range out.Kernels.Prefill {
				if l.Smem != 0 && strings.HasPrefix(l.Kernel, "swiglu") {
					t.Errorf("prefill launch %s streams (%d bytes)", l.Kernel, l.Smem)
				}
			}
			modelGolden(t, "swiglu-stream-"+dt.String()+".cu", out.Source)
			compiles(t, out.Source)
		})
	}
}

// qkvShape is a qkv's projections over rows of streamIn: q has heads·hd
// rows, k kvHeads·hd, v vRows, of types q, k and v; rope is its RoPE mode
// ("": none), rot its rotated dims (0: the whole head).
type qkvShape struct {
	heads, kvHeads, hd, vRows, rot int64
	rope                           string
	types                          [3]ir.DType
}

// phi3QKV is Phi-3-mini's attention: 32 heads of 96 (q, k and v alike),
// NeoX over the whole head, Q5_K.
var phi3QKV = qkvShape{heads: 32, kvHeads: 32, hd: 96, vRows: 32 * 96, rope: "neox", types: [3]ir.DType{ir.Q5_K, ir.Q5_K, ir.Q5_K}}

// llama3QKV is Llama-3.1-8B's attention in llama.cpp's Q4_K_M (at
// Phi-3-mini's width): 32 q heads of 128, 8 k and v heads, normal RoPE, q
// and k Q4_K, v Q6_K (half the layers).
var llama3QKV = qkvShape{heads: 32, kvHeads: 8, hd: 128, vRows: 8 * 128, rope: "normal", types: [3]ir.DType{ir.Q4_K, ir.Q4_K, ir.Q6_K}}

// qkNormQKV is Qwen3-8B's attention (at Phi-3-mini's width): Llama-3.1's
// shape and types, with no RoPE in the qkv (a per-head norm sits between
// the projection and the rotation).
var qkNormQKV = qkvShape{heads: 32, kvHeads: 8, hd: 128, vRows: 8 * 128, types: [3]ir.DType{ir.Q4_K, ir.Q4_K, ir.Q6_K}}

// qkvGraph is qkv(x, wq, wk, wv[, positions]) of shape s, RoPE folded in
// where s has it; its output is the last row of part (0: q, 1: k, 2: v).
func qkvGraph(t *testing.T, s qkvShape, part int64) (*ir.Graph, *plans.Manifest) {
	t.Helper()
	parts := []int64{s.heads * s.hd, s.kvHeads * s.hd, s.vRows}
	g, x, man := tableGraph("qkv", streamIn, parts[0]+parts[1]+parts[2])
	ws := []*ir.Node{x}
	for i, w := range []string{"wq", "wk", "wv"} {
		dt := s.types[i]
		gt, _ := gguf.TypeByName(dt.String())
		ws = append(ws, g.Add(ir.OpWeight, dt, ir.Shape{parts[i], streamIn}, map[string]any{"name": w}))
		man.Tensors = append(man.Tensors, plans.Tensor{Name: w, DType: dt.String(), Shape: []int64{parts[i], streamIn}, Bytes: parts[i] * gt.RowBytes(streamIn)})
	}
	attrs := map[string]any{"parts": parts}
	if s.rope != "" {
		rot := s.rot
		if rot == 0 {
			rot = s.hd
		}
		for k, v := range map[string]any{"rope_mode": s.rope, "heads": s.heads, "kv_heads": s.kvHeads, "head_dim": s.hd, "rot_dim": rot, "base": 10000.0} {
			attrs[k] = v
		}
		ws = append(ws, g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "positions"}))
	}
	y := g.Add(ir.OpQKV, ir.F32, ir.Shape{ir.T, parts[0] + parts[1] + parts[2]}, attrs, ws...)
	v := g.Add(ir.OpView, ir.F32, ir.Shape{ir.T, parts[part]}, map[string]any{"part": part}, y)
	g.Outputs = []*ir.Node{g.Add(ir.OpLast, ir.F32, ir.Shape{1, parts[part]}, nil, v)}
	runGPUPasses(t, g, man)
	return g, man
}

// TestQKVOnTensorCores: a decode qkv takes qkv_mma, streaming chunks of 8
// rotation pairs (two spans of 8 rows) in two blocks an SM whose registers
// let two share an SM, each stage room for two spans of the widest weight,
// and the emitted source matches its golden and compiles with nvcc for
// sm_80 and sm_90: Phi-3-mini's (Q5_K, NeoX pairs of a head), Llama-3.1's
// (grouped k and v, Q4_K q and k, Q6_K v, normal RoPE's consecutive pairs)
// and Qwen3's (Llama-3.1's, no RoPE).
func TestQKVOnTensorCores(t *testing.T) {
	q6Span := 192*96 + 16 + 16*96 + 16 + 2*96 + 16 // 8 rows of 12 blocks, each section padded
	for name, c := range map[string]struct {
		s      qkvShape
		smem   int
		golden string
	}{
		"phi-3 q5_k":          {phi3QKV, 2 * 2 * (128*96 + 32*96 + 16*96 + 3*16), "qkv-mma-q5_k.cu"},
		"llama-3.1 q4_k q6_k": {llama3QKV, 2 * 2 * q6Span, "qkv-mma-q4_k-q6_k.cu"},
		"qk-norm q4_k q6_k":   {qkNormQKV, 2 * 2 * q6Span, ""},
	} {
		t.Run(name, func(t *testing.T) {
			g, man := qkvGraph(t, c.s, 0)
			out, err := cuda.Generate(g, man, cuda.Options{})
			if err != nil {
				t.Fatal(err)
			}
			l := qkvLaunch(t, out)
			if l.Smem != c.smem || l.GridB[0] != 2*132 || l.Block[0] != 6*32 {
				t.Errorf("%s: %d bytes of stages, %d blocks of %d threads; want %d, 264 of 192", l.Kernel, l.Smem, l.GridB[0], l.Block[0], c.smem)
			}
			if !strings.Contains(out.Source, "__launch_bounds__(192, 2) "+l.Kernel+"(") {
				t.Errorf("%s is not bounded to two blocks an SM", l.Kernel)
			}
			if c.golden != "" {
				modelGolden(t, c.golden, out.Source)
				compiles(t, out.Source)
			}
		})
	}
}

// TestQKVFallsBack: a decode qkv that qkv_mma does not serve takes qkv_q8:
// a head_dim not a multiple of 16 under NeoX, a partial rotation, v rows
// not whole chunks of 16, weights without MmaCodes (Q8_0) (qkv_mma's
// static_asserts would make the first three nvcc errors).
func TestQKVFallsBack(t *testing.T) {
	q5 := phi3QKV.types
	for name, s := range map[string]qkvShape{
		"head_dim 72":         {heads: 32, kvHeads: 32, hd: 72, vRows: 32 * 72, rope: "neox", types: q5},
		"partial rotation":    {heads: 32, kvHeads: 8, hd: 128, vRows: 8 * 128, rot: 64, rope: "neox", types: q5},
		"v not whole chunks":  {heads: 32, kvHeads: 32, hd: 96, vRows: 32*96 - 8, rope: "neox", types: q5},
		"no mma codes (q8_0)": {heads: 32, kvHeads: 8, hd: 128, vRows: 8 * 128, rope: "normal", types: [3]ir.DType{ir.Q8_0, ir.Q8_0, ir.Q8_0}},
	} {
		t.Run(name, func(t *testing.T) {
			g, man := qkvGraph(t, s, 0)
			out, err := cuda.Generate(g, man, cuda.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var kernels []string
			for _, l := range out.Kernels.Decode {
				if strings.HasPrefix(l.Kernel, "qkv_") {
					kernels = append(kernels, l.Kernel[:strings.IndexByte(l.Kernel[4:], '_')+4])
				}
			}
			if len(kernels) != 1 || kernels[0] != "qkv_q8" {
				t.Errorf("decode qkv launches %v, want one qkv_q8", kernels)
			}
		})
	}
}

// qkvLaunch is the decode launch of qkv_mma in out's schedule.
func qkvLaunch(t *testing.T, out *cuda.Output) plans.Launch {
	t.Helper()
	for _, l := range out.Kernels.Decode {
		if strings.HasPrefix(l.Kernel, "qkv_mma") {
			return l
		}
	}
	t.Fatal("no qkv_mma launch in the decode schedule")
	return plans.Launch{}
}

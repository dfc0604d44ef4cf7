package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/quant"
	"github.com/llama-orch/orc/runtime"
	rcuda "github.com/llama-orch/orc/runtime/cuda"
)

// The MoE's tensor-core products over a few tokens (moe.cu.tmpl's
// moe_order … moe_down_mmat, a batched decode step's batch_decode_kernel
// mma_tokens) at real shapes: gpt-oss-20b's (MXFP4, biases, clamped
// SwiGLU) and Qwen3-30B-A3B's (Q4_K gate and up, Q6_K down, no biases).
// The harness's MoE nodes take mma_tokens as their prefill kernel, so a
// step of T tokens runs them over T rows. Each expert matrix is a slab of
// moeTokSlab distinct rows repeated (a prime, so no two experts' rows
// line up), which keeps the float64 reference cheap.
type moeTokShape struct {
	name       string
	d, f, e, k int
	gate, down gguf.Type
	gptOSS     bool // biases and the clamped SwiGLU
}

const moeTokSlab, moeTokVocab, moeTokMax = 97, 256, 64

var moeTokShapes = []moeTokShape{
	{name: "gpt-oss-20b", d: 2880, f: 2880, e: 32, k: 4, gate: gguf.MXFP4, down: gguf.MXFP4, gptOSS: true},
	{name: "qwen3-30b-a3b", d: 2048, f: 768, e: 128, k: 8, gate: gguf.Q4_K, down: gguf.Q6_K},
}

// moeTokHarness is one shape's weights (moeWeights' data names them as
// the graph does) and the slabs the expert tensors repeat.
type moeTokHarness struct {
	s          moeTokShape
	moeWeights              // table, router, its bias, the whole [E, rows, cols] tensors, biases (gpt-oss: [E·F], [E·F], [E·D]); data
	slab       [3][]byte    // gate, up, down: moeTokSlab rows each
	deq        [3][]float32 // their values
	mu         sync.Mutex
	refs       map[int][]float64
	chosen     map[int][]int
}

func newMoETokHarness(t *testing.T, s moeTokShape) *moeTokHarness {
	t.Helper()
	r := rand.New(rand.NewPCG(35, uint64(s.e)))
	h := &moeTokHarness{s: s, refs: map[int][]float64{}, chosen: map[int][]int{},
		moeWeights: moeWeights{table: normals(r, moeTokVocab*s.d, 1), router: normals(r, s.e*s.d, 0.05), routerB: normals(r, s.e, 0.1)}}
	for m, gt := range []gguf.Type{s.gate, s.gate, s.down} {
		rows, cols := s.f, s.d
		if m == 2 {
			rows, cols = s.d, s.f
		}
		if gt == gguf.MXFP4 {
			h.slab[m] = randomMXFP4(r, moeTokSlab*cols)
			h.deq[m] = make([]float32, moeTokSlab*cols)
			if err := quant.Dequantize(gt, h.slab[m], h.deq[m]); err != nil {
				t.Fatal(err)
			}
		} else {
			h.slab[m], h.deq[m] = randomSlab(t, r, gt, moeTokSlab*cols)
		}
		rb := len(h.slab[m]) / moeTokSlab
		h.mats[m] = make([]byte, 0, s.e*rows*rb)
		for j := range s.e * rows {
			h.mats[m] = append(h.mats[m], h.slab[m][j%moeTokSlab*rb:(j%moeTokSlab+1)*rb]...)
		}
		if s.gptOSS {
			h.biases[m] = normals(r, s.e*rows, 0.1)
		}
	}
	return h
}

// moeTokGraph is x = embed(table, tokens); y_i = moe_i(x) for i < blocks, every
// y an output, the MoEs' prefill kernel mma_tokens; the plan's "logits"
// are y_0 [moeTokMax, D].
func moeTokGraph(t *testing.T, s moeTokShape, blocks int) (*ir.Graph, *plans.Manifest, int64) {
	return moeTokGraphSteps(t, s, blocks, moeTokMax, ir.KernelMMATokens)
}

// moeTokGraphSteps is moeTokGraph for steps of up to maxTokens tokens, the
// MoEs' prefill kernel prefill ("": chooseKernels' GEMMs).
func moeTokGraphSteps(t *testing.T, s moeTokShape, blocks, maxTokens int, prefill string) (*ir.Graph, *plans.Manifest, int64) {
	t.Helper()
	g := ir.New()
	g.Attrs["max_tokens"] = int64(maxTokens)
	man := &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model:  plans.Model{Name: "moe_tokens", Arch: "moe_tokens", NLayer: 1, Vocab: maxTokens * s.d, ContextLength: 4096},
		Memory: plans.Memory{MaxTokens: maxTokens}}
	weight := func(name string, dt ir.DType, shape ir.Shape) *ir.Node {
		gt, _ := gguf.TypeByName(dt.String())
		man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: dt.String(), Shape: shape, Bytes: gt.RowBytes(shape.Elems(1))})
		return g.Add(ir.OpWeight, dt, shape, map[string]any{"name": name})
	}
	dtype := func(gt gguf.Type) ir.DType {
		dt, _ := ir.ParseDType(map[gguf.Type]string{gguf.MXFP4: "mxfp4", gguf.Q4_K: "q4_k", gguf.Q6_K: "q6_k"}[gt])
		return dt
	}
	E, F, D := int64(s.e), int64(s.f), int64(s.d)
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	x := g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, D}, nil, weight("table", ir.F32, ir.Shape{moeTokVocab, D}), tok)
	var ys []*ir.Node
	for i := range blocks {
		l := fmt.Sprintf("l%d.", i)
		attrs := map[string]any{"experts": E, "top_k": int64(s.k)}
		in := []*ir.Node{x, weight(l+"router", ir.F32, ir.Shape{E, D})}
		gate, up, down := weight(l+"gate", dtype(s.gate), ir.Shape{E, F, D}), weight(l+"up", dtype(s.gate), ir.Shape{E, F, D}), weight(l+"down", dtype(s.down), ir.Shape{E, D, F})
		if s.gptOSS {
			attrs["limit"], attrs["alpha"] = 7.0, 1.702
			in = append(in, weight(l+"router_b", ir.F32, ir.Shape{E}), gate, weight(l+"gate_b", ir.F32, ir.Shape{E, F}),
				up, weight(l+"up_b", ir.F32, ir.Shape{E, F}), down, weight(l+"down_b", ir.F32, ir.Shape{E, D}))
		} else {
			in = append(in, gate, up, down)
		}
		ys = append(ys, g.Add(ir.OpMoE, ir.F32, ir.Shape{ir.T, D}, attrs, in...))
	}
	g.Outputs = ys
	runGPUPasses(t, g, man)
	for _, n := range g.Nodes {
		if n.Op == ir.OpMoE {
			if n.Str("batch_decode_kernel") != "" {
				t.Fatalf("a graph without a last row recorded batch_decode_kernel %q", n.Str("batch_decode_kernel"))
			}
			if prefill != "" {
				n.Attrs["prefill_kernel"] = prefill
			}
		}
	}
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	return g, man, g.Outputs[0].Attrs["offset"].(int64)
}

func (h *moeTokHarness) open(t *testing.T, blocks int) *rcuda.Device {
	t.Helper()
	g, man, y0 := moeTokGraph(t, h.s, blocks)
	return openEditedPlan(t, g, man, 4096, h.data, func(k *plans.Kernels) {
		k.Decode = k.Prefill // T = 1 runs the prefill's kernels too
		k.Logits = y0
	})
}

// reference is the block's output for token tok in float64 from the
// dequantized weights (the CPU device's semantics), and the experts it
// chose; computed once a token.
func (h *moeTokHarness) reference(tok int) ([]float64, []int) {
	h.mu.Lock()
	if y, ok := h.refs[tok]; ok {
		h.mu.Unlock()
		return y, h.chosen[tok]
	}
	h.mu.Unlock()
	s := h.s
	x := make([]float64, s.d)
	for i, v := range h.table[tok*s.d : (tok+1)*s.d] {
		x[i] = float64(v)
	}
	dot := func(a []float32, b []float64) float64 {
		var sum float64
		for i, v := range a {
			sum += float64(v) * b[i]
		}
		return sum
	}
	row := func(m, j, cols int) []float32 { return h.deq[m][j%moeTokSlab*cols : (j%moeTokSlab+1)*cols] }
	bias := func(m, j int) float64 {
		if !s.gptOSS {
			return 0
		}
		return float64(h.biases[m][j])
	}
	logits := make([]float64, s.e)
	for e := range logits {
		logits[e] = dot(h.router[e*s.d:(e+1)*s.d], x)
		if s.gptOSS {
			logits[e] += float64(h.routerB[e])
		}
	}
	chosen, w := topKSoftmax(logits, s.k)
	y := make([]float64, s.d)
	hv := make([]float64, s.f)
	for i, e := range chosen {
		for f := range s.f {
			j := e*s.f + f
			g, u := dot(row(0, j, s.d), x)+bias(0, j), dot(row(1, j, s.d), x)+bias(1, j)
			if s.gptOSS {
				g, u = min(g, 7), min(max(u, -7), 7)
				hv[f] = (u + 1) * g / (1 + math.Exp(-1.702*g))
			} else {
				hv[f] = g / (1 + math.Exp(-g)) * u
			}
		}
		for o := range s.d {
			j := e*s.d + o
			y[o] += w[i] * (dot(row(2, j, s.f), hv) + bias(2, j))
		}
	}
	h.mu.Lock()
	h.refs[tok], h.chosen[tok] = y, chosen
	h.mu.Unlock()
	return y, chosen
}

// moeTokTokens are step T's tokens, all distinct: token i is (7i + salt) %
// moeTokVocab.
func moeTokTokens(T, salt int) []int32 {
	tokens := make([]int32, T)
	for i := range tokens {
		tokens[i] = int32((7*i + salt) % moeTokVocab)
	}
	return tokens
}

// TestMoETokensHarnessPlans: the harness plans' prefill schedules launch
// the MoE's tensor-core products (route, order, x's codes, gate+up, h's
// codes, down, sum; grid (tiles, S)). The GPU tests compile them (the
// tiny presets' goldens, in CI, the same templates).
func TestMoETokensHarnessPlans(t *testing.T) {
	for _, s := range moeTokShapes {
		g, man, _ := moeTokGraph(t, s, 1)
		out, err := cuda.Generate(g, man, cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var fns []string
		for _, l := range out.Kernels.Prefill {
			fns = append(fns, l.Kernel[:strings.Index(l.Kernel+"_Moe", "_Moe")])
			if !strings.Contains(l.Kernel, "_mmat") {
				continue
			}
			// 16 blocks an SM of sm_90's 132, at most one an expert.
			if want := min(int64(s.e), (16*132+l.GridB[0]-1)/l.GridB[0]); l.GridB[1] != want {
				t.Errorf("%s: %s's grid is %v, want (tiles, %d)", s.name, l.Kernel, l.GridB, want)
			}
		}
		if got, want := strings.Join(fns, " "), " moe_route moe_order moe_codes moe_gate_up_mmat moe_codes moe_down_mmat moe_sum"; !strings.HasSuffix(got, want) {
			t.Errorf("%s: the prefill launches %s, want … %s", s.name, got, want)
		}
	}
}

// TestGPUMoETokens checks the MoE's tensor-core products over a few tokens
// at gpt-oss-20b's and Qwen3-30B-A3B's shapes against the float64
// reference at T = 1, 3, 16, 33 and 64 (at 64, an expert has up to 64
// slots: several passes over its tile), every row of the step, each step
// after a full step of other tokens, so that a value the kernels fail to
// write keeps another token's. The bound is the integer-path decode's
// (moeDecodeTolerance): x and h are int16 codes here too.
func TestGPUMoETokens(t *testing.T) {
	gpuOnly(t)
	for _, s := range moeTokShapes {
		t.Run(s.name, func(t *testing.T) {
			h := newMoETokHarness(t, s)
			dev := h.open(t, 1)
			defer dev.Close()
			h.checkSteps(t, dev, moeTokMax, []int{1, 3, 16, 33, 64}, moeDecodeTolerance)
		})
	}
}

// checkSteps runs steps of ts tokens on dev (a plan of one block over h's
// weights whose logits are y_0, for steps of up to maxTokens) and checks
// every row of each against the float64 reference within bound; each step
// follows a full step of other tokens, so that a value the kernels fail to
// write keeps another token's.
func (h *moeTokHarness) checkSteps(t *testing.T, dev *rcuda.Device, maxTokens int, ts []int, bound float64) {
	t.Helper()
	for _, T := range ts {
		seq, err := dev.NewSequence(2 * maxTokens)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := seq.Forward(context.Background(), moeTokTokens(maxTokens, 101)); err != nil {
			t.Fatal(err)
		}
		tokens := moeTokTokens(T, T)
		got, err := seq.Forward(context.Background(), tokens)
		if err != nil {
			t.Fatal(err)
		}
		seq.Close()
		var wg sync.WaitGroup
		for _, tok := range tokens {
			wg.Add(1)
			go func() { defer wg.Done(); h.reference(int(tok)) }()
		}
		wg.Wait()
		var want []float64
		for _, tok := range tokens {
			y, _ := h.reference(int(tok))
			want = append(want, y...)
		}
		e := relErr64(got[:T*h.s.d], want)
		t.Logf("T=%d: relative error %.2e", T, e)
		if e > bound {
			t.Errorf("T=%d: relative error %.2e, bound %.0e", T, e, bound)
		}
	}
}

// TestGPUMoETokensSpeed times one MoE block's tensor-core products at
// gpt-oss-20b's and Qwen3-30B-A3B's shapes for steps of 2, 8, 16 and 64
// tokens: the median step of plans of four blocks less that of one, over
// three, and the bytes of the experts the step's tokens route to over
// that time. It prints and asserts nothing about speed; ORC_GPU_BENCH=1.
func TestGPUMoETokensSpeed(t *testing.T) {
	gpuOnly(t)
	if os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("timing: set ORC_GPU=1 ORC_GPU_BENCH=1")
	}
	for _, s := range moeTokShapes {
		h := newMoETokHarness(t, s)
		steps := []int{2, 8, 16, 64}
		var times [2][]time.Duration
		for i, blocks := range []int{1, 4} {
			dev := h.open(t, blocks)
			for _, T := range steps {
				times[i] = append(times[i], medianStep(t, dev, moeTokTokens(T, 5)))
			}
			dev.Close()
		}
		expertBytes := 0
		for _, m := range h.mats {
			expertBytes += len(m) / s.e
		}
		for j, T := range steps {
			touched := map[int]bool{}
			for _, tok := range moeTokTokens(T, 5) {
				_, chosen := h.reference(int(tok))
				for _, e := range chosen {
					touched[e] = true
				}
			}
			per := (times[1][j] - times[0][j]) / 3
			bytes := len(touched) * expertBytes
			t.Logf("%s T=%2d: %7.1f µs a block, %2d of %d experts (%.0f MB) → %.0f GB/s", s.name, T, float64(per.Nanoseconds())/1e3,
				len(touched), s.e, float64(bytes)/1e6, float64(bytes)/per.Seconds()/1e9)
		}
	}
}

// medianStep is the median time of 30 steps of tokens on dev (after 5).
func medianStep(t *testing.T, dev *rcuda.Device, tokens []int32) time.Duration {
	t.Helper()
	var seq runtime.Sequence
	var ts []time.Duration
	for i := range 35 {
		if seq == nil || seq.Pos()+len(tokens) > 4096 {
			if seq != nil {
				seq.Close()
			}
			s, err := dev.NewSequence(4096)
			if err != nil {
				t.Fatal(err)
			}
			seq = s
		}
		start := time.Now()
		if _, err := seq.Forward(context.Background(), tokens); err != nil {
			t.Fatal(err)
		}
		if i >= 5 {
			ts = append(ts, time.Since(start))
		}
	}
	seq.Close()
	slices.Sort(ts)
	return ts[len(ts)/2]
}

package cuda_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// The mma_tokens harness (mma_tokens.cu.tmpl): linears of every weight
// type with tensor-core fragments, in their GPU layout and in GGUF order,
// two SwiGLUs and a qkv of three types with biases, all over x [T, 512] with
// output rows that are no multiple of 16, their prefill kernels recorded as
// mma_tokens: two n-tiles of 8 tokens a block, more tokens (a plan of
// max_tokens 64) more blocks of each weight tile. And the streamed forms
// (mmat_stream) of the layouts that stream, over more tiles than their
// grids have blocks (each block walks two or three): a linear of each,
// SwiGLUs and a qkv, each in slabs of one super-block (two chunks a tile)
// and of the row, activations staged and read from global memory. And the
// f16 tensor-core kernels (mma_halves.cu.tmpl) of the K-quant layouts
// with their fragments: a linear of each, SwiGLUs and a qkv with biases,
// in clusters of one and of two blocks (a block the row's two super-blocks,
// or one); and a linear of each over activations of other widths
// (mmaHalvesWide), in clusters that leave a block one to four super-blocks
// of the row.
const mmaTokIn, mmaTokOut, mmaTokF, mmaTokSlab = 512, 200, 100, 64

// mmaHalvesClusters are the harness's mma_halves cluster sizes over x.
var mmaHalvesClusters = []int64{1, 2}

// mmaHalvesWide are the other widths of activations the harness's
// mma_halves linears take, each with its cluster sizes: a block of one
// super-block without a cluster; blocks of three (an odd count: the
// double-buffered walk's last one alone) and of one; of four (two rounds
// of the walk's pairs), two and one. So clusters of one and blocks of
// more than one super-block are each tested apart from the other.
var mmaHalvesWide = []struct {
	in       int64
	clusters []int64
}{{256, []int64{1}}, {768, []int64{1, 3}}, {1024, []int64{1, 2, 4}}}

// The streamed products' rows: 282 tiles of 16 (SwiGLU: 288 of 8
// columns; qkv: 250 + 32 + 32 of 8 pairs), more than the 264 blocks of a
// grid of two an SM (sm_90), the last tile partial.
const mmaTokStreamOut, mmaTokStreamF = 4500, 2300

var mmaTokStreamQKV = [3]int64{4000, 500, 500}

// mmaTokStream is a streamed variant: its K-slab and whether it stages
// its activations.
type mmaTokStream struct {
	slab   int64
	stageX bool
}

var mmaTokStreams = []mmaTokStream{{256, true}, {512, false}}

// mmaTokQKV are the harness qkv's parts: 50 pairs of q (the last tile
// partial), 16 of k and of v.
var mmaTokQKV = [3]int64{100, 32, 32}

var mmaTokTypes = []gguf.Type{gguf.Q4_0, gguf.Q5_0, gguf.Q8_0, gguf.Q4_K, gguf.Q5_K, gguf.Q6_K}

// mmaTokWeight is one weight of the harness: GGUF bytes of slab distinct
// rows of in elements tiled, their dequantized values, and whether it
// keeps GGUF order.
type mmaTokWeight struct {
	name    string
	dt      ir.DType
	gt      gguf.Type
	out, in int64
	data    []byte
	deq     []float32 // [mmaTokSlab, in]
	ggufOrd bool
}

func newMMATokWeight(t *testing.T, r *rand.Rand, name string, gt gguf.Type, out int64, ggufOrd bool) *mmaTokWeight {
	t.Helper()
	return newMMATokWeightOf(t, r, name, gt, out, mmaTokIn, ggufOrd)
}

// newMMATokWeightOf is newMMATokWeight with rows of in elements.
func newMMATokWeightOf(t *testing.T, r *rand.Rand, name string, gt gguf.Type, out, in int64, ggufOrd bool) *mmaTokWeight {
	t.Helper()
	dt, ok := ir.ParseDType(strings.ToLower(gt.String()))
	if !ok {
		t.Fatalf("no ir dtype for %s", gt)
	}
	b, deq := randomSlab(t, r, gt, mmaTokSlab*int(in))
	rowBytes := len(b) / mmaTokSlab
	var data []byte
	for o := range int(out) {
		data = append(data, b[(o%mmaTokSlab)*rowBytes:(o%mmaTokSlab+1)*rowBytes]...)
	}
	return &mmaTokWeight{name: name, dt: dt, gt: gt, out: out, in: in, data: data, deq: deq, ggufOrd: ggufOrd}
}

// dots is x·wᵀ in float64 for every token of table [tokens, w.in]:
// [tokens, w.out] (row o is the slab's row o % mmaTokSlab).
func (w *mmaTokWeight) dots(table []float32) []float64 {
	in := int(w.in)
	tokens := len(table) / in
	out := make([]float64, tokens*int(w.out))
	for tok := range tokens {
		x := table[tok*in : (tok+1)*in]
		for o := range int(w.out) {
			if o >= mmaTokSlab {
				out[tok*int(w.out)+o] = out[tok*int(w.out)+o%mmaTokSlab]
				continue
			}
			var s float64
			for i, v := range w.deq[o*in : (o+1)*in] {
				s += float64(v) * float64(x[i])
			}
			out[tok*int(w.out)+o] = s
		}
	}
	return out
}

// swigluOf is silu(g)·u of each element.
func swigluOf(g, u []float64) []float64 {
	y := make([]float64, len(g))
	for i := range y {
		y[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
	}
	return y
}

// mmaTokHarness is the harness's plan and what its outputs should be.
type mmaTokHarness struct {
	g      *ir.Graph
	man    *plans.Manifest
	data   map[string][]byte
	checks []gemmCheck // ref [maxTokens, cols]
	tokens int
}

// newMMATokHarness builds the harness plan of max_tokens tokens: every
// matrix node's prefill kernel mma_tokens, the weights named gguf_* left
// in GGUF order.
func newMMATokHarness(t *testing.T, tokens int) *mmaTokHarness {
	t.Helper()
	r := rand.New(rand.NewPCG(35, uint64(tokens)))
	h := &mmaTokHarness{data: map[string][]byte{}, tokens: tokens}
	table := make([]float32, tokens*mmaTokIn)
	for i := range table {
		table[i] = float32(r.NormFloat64())
	}
	h.data["table"] = f32Bytes(table)
	g := ir.New()
	g.Attrs["max_tokens"] = int64(tokens)
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	man := &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model:   plans.Model{Name: "mma_tokens", Arch: "mma_tokens", NLayer: 1, ContextLength: 2 * tokens},
		Memory:  plans.Memory{MaxTokens: tokens},
		Tensors: []plans.Tensor{{Name: "table", DType: "f32", Shape: []int64{int64(tokens), mmaTokIn}, Bytes: int64(4 * len(table))}}}
	tab := g.Add(ir.OpWeight, ir.F32, ir.Shape{int64(tokens), mmaTokIn}, map[string]any{"name": "table"})
	x := g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, mmaTokIn}, nil, tab, tok)
	weight := func(w *mmaTokWeight) *ir.Node {
		h.data[w.name] = w.data
		man.Tensors = append(man.Tensors, plans.Tensor{Name: w.name, DType: w.dt.String(), Shape: []int64{w.out, w.in}, Bytes: int64(len(w.data))})
		return g.Add(ir.OpWeight, w.dt, ir.Shape{w.out, w.in}, map[string]any{"name": w.name})
	}
	bias := func(name string, n int64) (*ir.Node, []float32) {
		b := make([]float32, n)
		for i := range b {
			b[i] = float32(r.NormFloat64())
		}
		h.data[name] = f32Bytes(b)
		man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: "f32", Shape: []int64{n}, Bytes: 4 * n})
		return g.Add(ir.OpWeight, ir.F32, ir.Shape{n}, map[string]any{"name": name}), b
	}
	var ggufOrder []string
	type pending struct {
		name string
		y    *ir.Node
		off  int64
		cols int
		ref  []float64
	}
	var outs []pending
	streamed := map[*ir.Node]mmaTokStream{} // the nodes that record mmat_slab, before the passes
	halves := map[*ir.Node]int64{}          // the nodes that take mma_halves, before the passes: their clusters
	for _, c := range mmaHalvesClusters {
		for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K} {
			w := newMMATokWeight(t, r, fmt.Sprintf("h%d_%s", c, gt), gt, mmaTokOut, false)
			y := g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, mmaTokOut}, nil, x, weight(w))
			halves[y] = c
			outs = append(outs, pending{fmt.Sprintf("halves %d %s", c, gt), y, 0, mmaTokOut, w.dots(table)})
		}
		for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q6_K} {
			gate := newMMATokWeight(t, r, fmt.Sprintf("hgate%d_%s", c, gt), gt, mmaTokF, false)
			up := newMMATokWeight(t, r, fmt.Sprintf("hup%d_%s", c, gt), gt, mmaTokF, false)
			y := g.Add(ir.OpSwiGLULinear, ir.F32, ir.Shape{ir.T, mmaTokF}, nil, x, weight(gate), weight(up))
			halves[y] = c
			outs = append(outs, pending{fmt.Sprintf("halves %d swiglu %s", c, gt), y, 0, mmaTokF, swigluOf(gate.dots(table), up.dots(table))})
		}
		inputs := []*ir.Node{x}
		var biases []*ir.Node
		var refs [3][]float64
		for i := range mmaTokQKV {
			w := newMMATokWeight(t, r, fmt.Sprintf("h%dw%s", c, "qkv"[i:i+1]), gguf.Q5_K, mmaTokQKV[i], false)
			inputs = append(inputs, weight(w))
			b, bv := bias(fmt.Sprintf("h%db%s", c, "qkv"[i:i+1]), mmaTokQKV[i])
			biases = append(biases, b)
			refs[i] = w.dots(table)
			for k := range refs[i] {
				refs[i][k] += float64(bv[k%int(w.out)])
			}
		}
		y := g.Add(ir.OpQKV, ir.F32, ir.Shape{ir.T, mmaTokQKV[0] + mmaTokQKV[1] + mmaTokQKV[2]}, map[string]any{"parts": mmaTokQKV[:]}, append(inputs, biases...)...)
		halves[y] = c
		var off int64
		for i := range mmaTokQKV {
			outs = append(outs, pending{fmt.Sprintf("halves %d qkv %s Q5_K", c, "qkv"[i:i+1]), y, off, int(mmaTokQKV[i]), refs[i]})
			off += int64(tokens) * mmaTokQKV[i]
		}
	}
	for _, wide := range mmaHalvesWide {
		name := fmt.Sprintf("table%d", wide.in)
		wt := make([]float32, tokens*int(wide.in))
		for i := range wt {
			wt[i] = float32(r.NormFloat64())
		}
		h.data[name] = f32Bytes(wt)
		man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: "f32", Shape: []int64{int64(tokens), wide.in}, Bytes: int64(4 * len(wt))})
		xw := g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, wide.in}, nil, g.Add(ir.OpWeight, ir.F32, ir.Shape{int64(tokens), wide.in}, map[string]any{"name": name}), tok)
		for _, c := range wide.clusters {
			for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K} {
				w := newMMATokWeightOf(t, r, fmt.Sprintf("h%d_%d_%s", wide.in, c, gt), gt, mmaTokOut, wide.in, false)
				y := g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, mmaTokOut}, nil, xw, weight(w))
				halves[y] = c
				outs = append(outs, pending{fmt.Sprintf("halves %d of %d %s", c, wide.in, gt), y, 0, mmaTokOut, w.dots(wt)})
			}
		}
	}
	// Each variant its own weights: the passes merge equal nodes.
	for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K} {
		for k, st := range mmaTokStreams {
			w := newMMATokWeight(t, r, fmt.Sprintf("stream%d_%s", k, gt), gt, mmaTokStreamOut, false)
			y := g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, mmaTokStreamOut}, nil, x, weight(w))
			streamed[y] = st
			outs = append(outs, pending{fmt.Sprintf("stream %s %d %v", gt, st.slab, st.stageX), y, 0, mmaTokStreamOut, w.dots(table)})
		}
	}
	for i, gt := range []gguf.Type{gguf.Q4_K, gguf.Q6_K} {
		gate := newMMATokWeight(t, r, "sgate_"+gt.String(), gt, mmaTokStreamF, false)
		up := newMMATokWeight(t, r, "sup_"+gt.String(), gt, mmaTokStreamF, false)
		ref := swigluOf(gate.dots(table), up.dots(table))
		y := g.Add(ir.OpSwiGLULinear, ir.F32, ir.Shape{ir.T, mmaTokStreamF}, nil, x, weight(gate), weight(up))
		streamed[y] = mmaTokStreams[i]
		outs = append(outs, pending{fmt.Sprintf("stream swiglu %s %d %v", gt, streamed[y].slab, streamed[y].stageX), y, 0, mmaTokStreamF, ref})
	}
	for k, st := range mmaTokStreams {
		inputs := []*ir.Node{x}
		var refs [3][]float64
		for i, o := range mmaTokStreamQKV {
			w := newMMATokWeight(t, r, fmt.Sprintf("s%dw%s", k, "qkv"[i:i+1]), gguf.Q5_K, o, false)
			inputs = append(inputs, weight(w))
			refs[i] = w.dots(table)
		}
		y := g.Add(ir.OpQKV, ir.F32, ir.Shape{ir.T, mmaTokStreamQKV[0] + mmaTokStreamQKV[1] + mmaTokStreamQKV[2]}, map[string]any{"parts": mmaTokStreamQKV[:]}, inputs...)
		streamed[y] = st
		var off int64
		for i := range mmaTokStreamQKV {
			outs = append(outs, pending{fmt.Sprintf("stream qkv %s Q5_K %d %v", "qkv"[i:i+1], st.slab, st.stageX), y, off, int(mmaTokStreamQKV[i]), refs[i]})
			off += int64(tokens) * mmaTokStreamQKV[i] // MAX_TOKENS · the earlier parts' rows
		}
	}
	for _, gt := range mmaTokTypes {
		for _, ord := range []bool{false, true} {
			if ord && gt == gguf.Q4_K { // its GPU layout is GGUF order
				continue
			}
			name := "w_" + gt.String()
			if ord {
				name, ggufOrder = "gguf_"+gt.String(), append(ggufOrder, "gguf_"+gt.String())
			}
			w := newMMATokWeight(t, r, name, gt, mmaTokOut, ord)
			outs = append(outs, pending{name, g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, mmaTokOut}, nil, x, weight(w)), 0, mmaTokOut, w.dots(table)})
		}
	}
	for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q6_K} {
		gate := newMMATokWeight(t, r, "gate_"+gt.String(), gt, mmaTokF, false)
		up := newMMATokWeight(t, r, "up_"+gt.String(), gt, mmaTokF, false)
		ref := swigluOf(gate.dots(table), up.dots(table))
		outs = append(outs, pending{"swiglu " + gt.String(), g.Add(ir.OpSwiGLULinear, ir.F32, ir.Shape{ir.T, mmaTokF}, nil, x, weight(gate), weight(up)), 0, mmaTokF, ref})
	}
	qkvTypes := [3]gguf.Type{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K}
	inputs := []*ir.Node{x}
	var biases []*ir.Node
	var refs [3][]float64
	for i, gt := range qkvTypes {
		w := newMMATokWeight(t, r, "w"+"qkv"[i:i+1], gt, mmaTokQKV[i], false)
		inputs = append(inputs, weight(w))
		b, bv := bias("b"+"qkv"[i:i+1], mmaTokQKV[i])
		biases = append(biases, b)
		refs[i] = w.dots(table)
		for k := range refs[i] {
			refs[i][k] += float64(bv[k%int(w.out)])
		}
	}
	qkv := g.Add(ir.OpQKV, ir.F32, ir.Shape{ir.T, mmaTokQKV[0] + mmaTokQKV[1] + mmaTokQKV[2]}, map[string]any{"parts": mmaTokQKV[:]}, append(inputs, biases...)...)
	var partOff int64
	for i := range mmaTokQKV {
		outs = append(outs, pending{"qkv " + "qkv"[i:i+1] + " " + qkvTypes[i].String(), qkv, partOff, int(mmaTokQKV[i]), refs[i]})
		partOff += int64(tokens) * mmaTokQKV[i] // MAX_TOKENS · the earlier parts' rows
	}
	for _, o := range outs {
		if !slices.Contains(g.Outputs, o.y) {
			g.Outputs = append(g.Outputs, o.y)
		}
	}
	before := slices.Clone(g.Outputs)
	runGPUPasses(t, g, man)
	gpu, err := passes.GPUTarget("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		switch {
		case n.Op == ir.OpLinear || n.Op == ir.OpSwiGLULinear || n.Op == ir.OpQKV:
			n.Attrs["prefill_kernel"] = ir.KernelMMATokens
			if i := slices.Index(g.Outputs, n); i >= 0 {
				if st, ok := streamed[before[i]]; ok {
					n.Attrs["mmat_slab"] = st.slab
					n.Attrs["mmat_stage_x"] = st.stageX
				}
				if c, ok := halves[before[i]]; ok {
					in := n.Inputs[0].Shape[len(n.Inputs[0].Shape)-1]
					sh, ok := gpu.MMAHalvesCluster(in, passes.MMATokenTiles(n), int64(tokens), c)
					if !ok {
						t.Fatalf("%s %%%d: no mma_halves shape of clusters of %d", n.Op, n.ID, c)
					}
					n.Attrs["prefill_kernel"] = ir.KernelMMAHalves
					n.Attrs["mmah_cluster"], n.Attrs["mmah_warps"], n.Attrs["mmah_clusters"] = sh.Cluster, sh.Warps, sh.Clusters
				}
			}
		case n.Op == ir.OpWeight && slices.Contains(ggufOrder, n.Str("name")):
			delete(n.Attrs, "layout")
			for i := range man.Tensors {
				if man.Tensors[i].Name == n.Str("name") {
					man.Tensors[i].Layout = ""
				}
			}
		}
	}
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		y := g.Outputs[slices.Index(before, o.y)] // the passes may have replaced nodes
		h.checks = append(h.checks, gemmCheck{o.name, y, o.off, o.cols, o.ref})
	}
	// The "logits" are the arena span holding every output.
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, y := range g.Outputs {
		off := y.Attrs["offset"].(int64)
		lo, hi = min(lo, off), max(hi, off+4*int64(tokens)*y.Shape[1])
	}
	man.Model.Vocab = int((hi - lo) / 4)
	h.g, h.man = g, man
	return h
}

// logitsAt is the arena offset of the harness's "logits": its first output.
func (h *mmaTokHarness) logitsAt() int64 {
	lo := int64(math.MaxInt64)
	for _, y := range h.g.Outputs {
		lo = min(lo, y.Attrs["offset"].(int64))
	}
	return lo
}

// TestMMATokensHarnessPlans: the harness plans' prefill schedules launch
// the mma_tokens kernels (one a node, grid y ceil(T/16): two n-tiles a
// block; a streamed one's grid fewer blocks than its tiles, with the
// shared memory of its stages) and the mma_halves kernels (their
// activations' shared memory, a grid row of whole clusters, clusters of
// one to four blocks of one to four super-blocks), each kernel waiting for
// the grid before it once, and
// compile with nvcc for sm_80 and sm_90, every fragment accessor included.
func TestMMATokensHarnessPlans(t *testing.T) {
	for _, c := range []struct{ tokens, div int64 }{{16, 16}, {64, 16}} {
		h := newMMATokHarness(t, int(c.tokens))
		out, err := cuda.Generate(h.g, h.man, cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		counts, clusters := map[string]int{}, map[int]int{}
		for _, l := range out.Kernels.Prefill {
			for _, fn := range []string{"linear_mmat_stream", "swiglu_mmat_stream", "qkv_mmat_stream", "linear_mmat", "swiglu_mmat", "qkv_mmat", "linear_mmah", "swiglu_mmah", "qkv_mmah"} {
				if strings.HasPrefix(l.Kernel, fn) {
					counts[fn]++
					if l.GridA[1] != 1 || l.GridDiv[1] != c.div {
						t.Errorf("max_tokens %d: %s's grid y is %d·T over %d, want T over %d", c.tokens, l.Kernel, l.GridA[1], l.GridDiv[1], c.div)
					}
					if strings.HasSuffix(fn, "_mmah") {
						cl, _ := strconv.Atoi(strings.Split(l.Kernel, "_")[len(strings.Split(l.Kernel, "_"))-4])
						if l.Smem == 0 || cl < 1 || l.GridB[0]%int64(cl) != 0 {
							t.Errorf("max_tokens %d: %s has %d blocks a row (clusters of %d), %d bytes of shared memory", c.tokens, l.Kernel, l.GridB[0], cl, l.Smem)
						}
						clusters[cl]++
						break
					}
					if streams := strings.HasSuffix(fn, "_stream"); streams != (l.Smem > 0) || streams && l.GridB[0] >= 282 {
						t.Errorf("max_tokens %d: %s has %d blocks a row, %d bytes of shared memory", c.tokens, l.Kernel, l.GridB[0], l.Smem)
					}
					break
				}
			}
		}
		kernelsWait(t, fmt.Sprintf("max_tokens %d", c.tokens), out.Source)
		if want := map[string]int{"linear_mmat": 11, "swiglu_mmat": 2, "qkv_mmat": 1, "linear_mmat_stream": 6, "swiglu_mmat_stream": 2, "qkv_mmat_stream": 2,
			"linear_mmah": 24, "swiglu_mmah": 4, "qkv_mmah": 2}; fmt.Sprint(counts) != fmt.Sprint(want) {
			t.Errorf("max_tokens %d: the prefill launches %v, want %v", c.tokens, counts, want)
		}
		if want := map[int]int{1: 15, 2: 9, 3: 3, 4: 3}; fmt.Sprint(clusters) != fmt.Sprint(want) {
			t.Errorf("max_tokens %d: mma_halves launches by cluster %v, want %v", c.tokens, clusters, want)
		}
		for _, acc := range []string{"W_q4_0_split<", "W_q4_0<", "W_q5_0_split<", "W_q5_0<", "W_q8_0_split<", "W_q8_0<", "W_q4_k<", "W_q5_k_split<", "W_q5_k<", "W_q6_k_split<", "W_q6_k<"} {
			if !strings.Contains(out.Source, "linear_mmat<"+acc) {
				t.Errorf("max_tokens %d: no linear_mmat over %s…> in the source", c.tokens, acc)
			}
		}
		for _, acc := range []string{"W_q4_k<", "W_q5_k_split<", "W_q6_k_split<"} {
			if !strings.Contains(out.Source, "linear_mmah<"+acc) {
				t.Errorf("max_tokens %d: no linear_mmah over %s…> in the source", c.tokens, acc)
			}
		}
		if c.tokens == 64 { // the same kernels in both plans
			compiles(t, out.Source)
		}
	}
}

// TestGPUMMATokens runs the harness plans' mma_tokens kernels against a
// float64 reference at T = 1, 3, 8, 9 and 16 (max_tokens 16: one block of
// two n-tiles a weight tile) and 1, 9, 17, 33 and 64 (max_tokens 64: up to
// four), each step after a
// full step of other tokens in the same sequence, so that a value the
// kernels fail to write keeps another token's (stepAfterPoison).
func TestGPUMMATokens(t *testing.T) {
	gpuOnly(t)
	for _, c := range []struct {
		tokens int
		steps  []int
	}{{16, []int{1, 3, 8, 9, 16}}, {64, []int{1, 9, 17, 33, 64}}} {
		h := newMMATokHarness(t, c.tokens)
		lo := h.logitsAt()
		dev := openEditedPlan(t, h.g, h.man, 2*c.tokens, func(name string) []byte { return h.data[name] }, func(k *plans.Kernels) {
			k.Decode = k.Prefill // T = 1 runs the prefill's kernels too
			k.Logits = lo
		})
		worst := make([]float64, len(h.checks))
		for _, T := range c.steps {
			got := stepAfterPoison(t, dev, c.tokens, T)
			for i, ch := range h.checks {
				off := (ch.y.Attrs["offset"].(int64)-lo)/4 + ch.off
				e := relErr64(got[off:off+int64(T*ch.cols)], ch.ref[:T*ch.cols])
				worst[i] = max(worst[i], e)
				tol := 2e-4
				if strings.HasPrefix(ch.name, "swiglu") {
					tol *= 2 // two products' roundings, multiplied
				}
				if e > tol {
					t.Errorf("max_tokens %d, T=%d, %s: relative error %.2e", c.tokens, T, ch.name, e)
				}
			}
		}
		for i, ch := range h.checks {
			t.Logf("max_tokens %d %-14s max |gpu-ref|/max|ref| over T=%v: %.2e", c.tokens, ch.name, c.steps, worst[i])
		}
	}
}

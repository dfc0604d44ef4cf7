package cuda_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
	rcuda "github.com/llama-orch/orc/runtime/cuda"
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
// with their fragments: a linear of each, SwiGLUs and a qkv with biases
// (mmaHalvesSets); and a linear of each over activations of their own
// (mmaHalvesWide), in clusters that leave a block one to four super-blocks
// of the row.
const mmaTokIn, mmaTokOut, mmaTokF, mmaTokSlab = 512, 200, 100, 64

// mmaHalvesSets are the harness's sets of mma_halves products (a linear
// of each K-quant, SwiGLUs and a qkv): over x in clusters of two blocks
// (a block a super-block of the row; clusters of one over rows of two
// super-blocks are refused, passes.MMAHalvesShape), and over activations
// of 1024 of their own in clusters of one (a block the row's four).
var mmaHalvesSets = []struct{ in, cluster int64 }{{mmaTokIn, 2}, {1024, 1}}

// mmaHalvesWide are the other activations of their own (each its
// embedding) that the harness's mma_halves linears take, each width with
// its cluster sizes: a block of one super-block without a cluster; blocks
// of three (an odd count: the double-buffered walk's last one alone) and
// of one; of four (two rounds of the walk's pairs), two and one; and
// Phi-3-mini's width in its qkv's and SwiGLU's clusters of six (blocks of
// two). So clusters of one and blocks of more than one super-block are
// each tested apart from the other.
var mmaHalvesWide = []struct {
	in       int64
	clusters []int64
}{{256, []int64{1}}, {768, []int64{1, 3}}, {1024, []int64{1, 2, 4}}, {3072, []int64{6}}}

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

// mmaTokBuilder builds a harness plan: its graph, manifest and weights,
// the outputs to check and which nodes record a streamed or mma_halves
// kernel (before the passes).
type mmaTokBuilder struct {
	r        *rand.Rand
	h        *mmaTokHarness
	g        *ir.Graph
	man      *plans.Manifest
	tok      *ir.Node
	outs     []mmaTokPending
	streamed map[*ir.Node]mmaTokStream     // the nodes that record mmat_slab
	halves   map[*ir.Node]int64            // the nodes that take mma_halves: their clusters
	shapes   map[*ir.Node]passes.MMAHalves // mma_halves shapes given, not chosen
	gguf     []string                      // the weights left in GGUF order
}

// mmaTokPending is an output to check: its part at off (floats) of node
// y, of cols columns a token, and its float64 reference [tokens, cols].
type mmaTokPending struct {
	name string
	y    *ir.Node
	off  int64
	cols int
	ref  []float64
}

// newMMATokBuilder starts a harness plan of max_tokens tokens (r seeded
// by seed and tokens).
func newMMATokBuilder(tokens int, seed uint64) *mmaTokBuilder {
	b := &mmaTokBuilder{r: rand.New(rand.NewPCG(seed, uint64(tokens))), h: &mmaTokHarness{data: map[string][]byte{}, tokens: tokens}, g: ir.New(),
		streamed: map[*ir.Node]mmaTokStream{}, halves: map[*ir.Node]int64{}, shapes: map[*ir.Node]passes.MMAHalves{}}
	b.g.Attrs["max_tokens"] = int64(tokens)
	b.tok = b.g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	b.man = &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model:  plans.Model{Name: "mma_tokens", Arch: "mma_tokens", NLayer: 1, ContextLength: 2 * tokens},
		Memory: plans.Memory{MaxTokens: tokens}}
	return b
}

// embed adds an embedding table [tokens, in] of normal values named name
// and its rows of the step's tokens: x [T, in] and the table.
func (b *mmaTokBuilder) embed(name string, in int64) (*ir.Node, []float32) {
	tokens := b.h.tokens
	table := make([]float32, tokens*int(in))
	for i := range table {
		table[i] = float32(b.r.NormFloat64())
	}
	b.h.data[name] = f32Bytes(table)
	b.man.Tensors = append(b.man.Tensors, plans.Tensor{Name: name, DType: "f32", Shape: []int64{int64(tokens), in}, Bytes: int64(4 * len(table))})
	tab := b.g.Add(ir.OpWeight, ir.F32, ir.Shape{int64(tokens), in}, map[string]any{"name": name})
	return b.g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, in}, nil, tab, b.tok), table
}

// weight adds w to the plan.
func (b *mmaTokBuilder) weight(w *mmaTokWeight) *ir.Node {
	b.h.data[w.name] = w.data
	b.man.Tensors = append(b.man.Tensors, plans.Tensor{Name: w.name, DType: w.dt.String(), Shape: []int64{w.out, w.in}, Bytes: int64(len(w.data))})
	return b.g.Add(ir.OpWeight, w.dt, ir.Shape{w.out, w.in}, map[string]any{"name": w.name})
}

// bias adds a bias of n normal values.
func (b *mmaTokBuilder) bias(name string, n int64) (*ir.Node, []float32) {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(b.r.NormFloat64())
	}
	b.h.data[name] = f32Bytes(v)
	b.man.Tensors = append(b.man.Tensors, plans.Tensor{Name: name, DType: "f32", Shape: []int64{n}, Bytes: 4 * n})
	return b.g.Add(ir.OpWeight, ir.F32, ir.Shape{n}, map[string]any{"name": name}), v
}

// linear adds x·wᵀ of a new weight of type gt (out rows of x's width, in
// GGUF order where ord), checked as name.
func (b *mmaTokBuilder) linear(t *testing.T, name, wname string, x *ir.Node, table []float32, gt gguf.Type, out int64, ord bool) *ir.Node {
	w := newMMATokWeightOf(t, b.r, wname, gt, out, x.Shape[1], ord)
	y := b.g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, out}, nil, x, b.weight(w))
	b.outs = append(b.outs, mmaTokPending{name, y, 0, int(out), w.dots(table)})
	return y
}

// swiglu adds silu(x·gateᵀ)·(x·upᵀ) of new weights of type gt (f rows
// each), checked as name.
func (b *mmaTokBuilder) swiglu(t *testing.T, name, gname, uname string, x *ir.Node, table []float32, gt gguf.Type, f int64) *ir.Node {
	gate := newMMATokWeightOf(t, b.r, gname, gt, f, x.Shape[1], false)
	up := newMMATokWeightOf(t, b.r, uname, gt, f, x.Shape[1], false)
	y := b.g.Add(ir.OpSwiGLULinear, ir.F32, ir.Shape{ir.T, f}, nil, x, b.weight(gate), b.weight(up))
	b.outs = append(b.outs, mmaTokPending{name, y, 0, int(f), swigluOf(gate.dots(table), up.dots(table))})
	return y
}

// qkv adds a qkv of parts rows (pairs of rotations: no RoPE here) of new
// weights of types gts, named prefix+"w"+part, with biases prefix+"b"+part
// where biased, each part checked as name + " " + part + " " + type.
func (b *mmaTokBuilder) qkv(t *testing.T, name, prefix string, x *ir.Node, table []float32, gts [3]gguf.Type, parts [3]int64, biased bool) *ir.Node {
	inputs := []*ir.Node{x}
	var biases []*ir.Node
	var refs [3][]float64
	for i := range parts {
		w := newMMATokWeightOf(t, b.r, prefix+"w"+"qkv"[i:i+1], gts[i], parts[i], x.Shape[1], false)
		inputs = append(inputs, b.weight(w))
		refs[i] = w.dots(table)
		if biased {
			bn, bv := b.bias(prefix+"b"+"qkv"[i:i+1], parts[i])
			biases = append(biases, bn)
			for k := range refs[i] {
				refs[i][k] += float64(bv[k%int(w.out)])
			}
		}
	}
	y := b.g.Add(ir.OpQKV, ir.F32, ir.Shape{ir.T, parts[0] + parts[1] + parts[2]}, map[string]any{"parts": parts[:]}, append(inputs, biases...)...)
	var off int64
	for i := range parts {
		b.outs = append(b.outs, mmaTokPending{fmt.Sprintf("%s %s %s", name, "qkv"[i:i+1], gts[i]), y, off, int(parts[i]), refs[i]})
		off += int64(b.h.tokens) * parts[i] // MAX_TOKENS · the earlier parts' rows
	}
	return y
}

// halvesSet adds the mma_halves products of clusters of c blocks over x
// (weights named after prefix): a linear of each K-quant, SwiGLUs of
// Q4_K and Q6_K and a qkv of Q5_K with biases.
func (b *mmaTokBuilder) halvesSet(t *testing.T, name, prefix string, x *ir.Node, table []float32, c int64) {
	for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K} {
		b.halves[b.linear(t, fmt.Sprintf("%s %s", name, gt), fmt.Sprintf("%s_%s", prefix, gt), x, table, gt, mmaTokOut, false)] = c
	}
	for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q6_K} {
		b.halves[b.swiglu(t, fmt.Sprintf("%s swiglu %s", name, gt), fmt.Sprintf("%sgate_%s", prefix, gt), fmt.Sprintf("%sup_%s", prefix, gt), x, table, gt, mmaTokF)] = c
	}
	b.halves[b.qkv(t, name+" qkv", prefix, x, table, [3]gguf.Type{gguf.Q5_K, gguf.Q5_K, gguf.Q5_K}, mmaTokQKV, true)] = c
}

// build runs the passes over the plan, records every matrix node's
// prefill kernel (mma_tokens; a streamed one's slab, an mma_halves one's
// shape of its clusters), leaves the gguf weights in GGUF order and
// returns the harness.
func (b *mmaTokBuilder) build(t *testing.T) *mmaTokHarness {
	t.Helper()
	g, man, h, tokens := b.g, b.man, b.h, b.h.tokens
	for _, o := range b.outs {
		if !slices.Contains(g.Outputs, o.y) {
			g.Outputs = append(g.Outputs, o.y)
		}
	}
	before := slices.Clone(g.Outputs)
	after := runGPUPasses(t, g, man)
	gpu, err := passes.GPUTarget("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		switch {
		case n.Op == ir.OpLinear || n.Op == ir.OpSwiGLULinear || n.Op == ir.OpQKV:
			n.Attrs["prefill_kernel"] = ir.KernelMMATokens
			if i := slices.Index(g.Outputs, n); i >= 0 {
				if st, ok := b.streamed[before[i]]; ok {
					n.Attrs["mmat_slab"] = st.slab
					n.Attrs["mmat_stage_x"] = st.stageX
				}
				if c, ok := b.halves[before[i]]; ok {
					in := n.Inputs[0].Shape[len(n.Inputs[0].Shape)-1]
					sh, ok := gpu.MMAHalvesCluster(in, passes.MMATokenTiles(n), int64(tokens), c)
					if given, has := b.shapes[before[i]]; has {
						sh, ok = given, true
					}
					if !ok {
						t.Fatalf("%s %%%d: no mma_halves shape of clusters of %d", n.Op, n.ID, c)
					}
					n.Attrs["prefill_kernel"] = ir.KernelMMAHalves
					sh.Record(n)
				}
			}
		case n.Op == ir.OpWeight && slices.Contains(b.gguf, n.Str("name")):
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
	for _, o := range b.outs {
		y := after[o.y]
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

// newMMATokHarness builds the harness plan of max_tokens tokens: every
// matrix node's prefill kernel mma_tokens, the weights named gguf_* left
// in GGUF order.
func newMMATokHarness(t *testing.T, tokens int) *mmaTokHarness {
	t.Helper()
	b := newMMATokBuilder(tokens, 35)
	x, table := b.embed("table", mmaTokIn)
	for _, set := range mmaHalvesSets {
		xs, ts := x, table
		if set.in != mmaTokIn {
			xs, ts = b.embed(fmt.Sprintf("tableset%d", set.in), set.in)
		}
		b.halvesSet(t, fmt.Sprintf("halves %d of %d", set.cluster, set.in), fmt.Sprintf("h%d_%d", set.cluster, set.in), xs, ts, set.cluster)
	}
	for _, wide := range mmaHalvesWide {
		xw, wt := b.embed(fmt.Sprintf("table%d", wide.in), wide.in)
		for _, c := range wide.clusters {
			for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K} {
				b.halves[b.linear(t, fmt.Sprintf("halves %d of %d %s", c, wide.in, gt), fmt.Sprintf("h%d_%d_%s", wide.in, c, gt), xw, wt, gt, mmaTokOut, false)] = c
			}
		}
	}
	// Each variant its own weights: the passes merge equal nodes.
	for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K} {
		for k, st := range mmaTokStreams {
			b.streamed[b.linear(t, fmt.Sprintf("stream %s %d %v", gt, st.slab, st.stageX), fmt.Sprintf("stream%d_%s", k, gt), x, table, gt, mmaTokStreamOut, false)] = st
		}
	}
	for i, gt := range []gguf.Type{gguf.Q4_K, gguf.Q6_K} {
		st := mmaTokStreams[i]
		b.streamed[b.swiglu(t, fmt.Sprintf("stream swiglu %s %d %v", gt, st.slab, st.stageX), "sgate_"+gt.String(), "sup_"+gt.String(), x, table, gt, mmaTokStreamF)] = st
	}
	for k, st := range mmaTokStreams {
		y := b.qkv(t, "stream qkv", fmt.Sprintf("s%d", k), x, table, [3]gguf.Type{gguf.Q5_K, gguf.Q5_K, gguf.Q5_K}, mmaTokStreamQKV, false)
		b.streamed[y] = st
		for i := len(b.outs) - 3; i < len(b.outs); i++ {
			b.outs[i].name += fmt.Sprintf(" %d %v", st.slab, st.stageX)
		}
	}
	for _, gt := range mmaTokTypes {
		for _, ord := range []bool{false, true} {
			if ord && gt == gguf.Q4_K { // its GPU layout is GGUF order
				continue
			}
			name := "w_" + gt.String()
			if ord {
				name, b.gguf = "gguf_"+gt.String(), append(b.gguf, "gguf_"+gt.String())
			}
			b.linear(t, name, name, x, table, gt, mmaTokOut, ord)
		}
	}
	for _, gt := range []gguf.Type{gguf.Q4_K, gguf.Q6_K} {
		b.swiglu(t, "swiglu "+gt.String(), "gate_"+gt.String(), "up_"+gt.String(), x, table, gt, mmaTokF)
	}
	b.qkv(t, "qkv", "", x, table, [3]gguf.Type{gguf.Q4_K, gguf.Q5_K, gguf.Q6_K}, mmaTokQKV, true)
	return b.build(t)
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
// one to four and six blocks of one to four super-blocks), each kernel
// waiting for the grid before it once, and compile with nvcc for sm_80
// and sm_90, every fragment accessor included.
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
						cl, _ := strconv.Atoi(strings.Split(l.Kernel, "_")[len(strings.Split(l.Kernel, "_"))-5]) // …_C_NW_XH_NT_ROWS
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
			"linear_mmah": 27, "swiglu_mmah": 4, "qkv_mmah": 2}; fmt.Sprint(counts) != fmt.Sprint(want) {
			t.Errorf("max_tokens %d: the prefill launches %v, want %v", c.tokens, counts, want)
		}
		if want := map[int]int{1: 15, 2: 9, 3: 3, 4: 3, 6: 3}; fmt.Sprint(clusters) != fmt.Sprint(want) {
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
// four), each step after a full step of other tokens in the same
// sequence, so that a value the kernels fail to write keeps another
// token's (stepAfterPoison); and again with every launch synchronised
// (SyncEachLaunch: no grid overlaps the one before it).
func TestGPUMMATokens(t *testing.T) {
	gpuOnly(t)
	for _, c := range []struct {
		tokens int
		steps  []int
	}{{16, []int{1, 3, 8, 9, 16}}, {64, []int{1, 9, 17, 33, 64}}} {
		h := newMMATokHarness(t, c.tokens)
		h.run(t, fmt.Sprintf("max_tokens %d", c.tokens), c.steps)
	}
}

// mmatTolerance is the relative error (of the largest output) a token
// product y may have against float64: the int16 or 22-bit rounding of the
// activations, 2e-4; an mma_halves kernel's activations rounded to f16
// (mmah_x_halves 1: 2^-11 an element, and Q4_K's mins cancel part of its
// codes' products: up to 5.7e-4 at the harness's widths, H200), 1e-3; a
// SwiGLU's twice that (two products' roundings, multiplied).
func mmatTolerance(y *ir.Node, swiglu bool) float64 {
	tol := 2e-4
	if y.Int("mmah_x_halves") == 1 {
		tol = 1e-3
	}
	if swiglu {
		tol *= 2
	}
	return tol
}

// run checks the harness plan's outputs at each of steps tokens (after a
// poison step), opened as is and with every launch synchronised; label
// names the plan in the messages.
func (h *mmaTokHarness) run(t *testing.T, label string, steps []int) {
	t.Helper()
	lo := h.logitsAt()
	dir := writeEditedPlan(t, h.g, h.man, func(name string) []byte { return h.data[name] }, func(k *plans.Kernels) {
		k.Decode = k.Prefill // T = 1 runs the prefill's kernels too
		k.Logits = lo
	})
	for _, sync := range []bool{false, true} {
		mode := label
		if sync {
			mode += ", launches synchronised"
		}
		dev := openPlanDir(t, dir, rcuda.Options{Ctx: 2 * h.tokens, SyncEachLaunch: sync})
		worst := make([]float64, len(h.checks))
		for _, T := range steps {
			got := stepAfterPoison(t, dev, h.tokens, T)
			for i, ch := range h.checks {
				off := (ch.y.Attrs["offset"].(int64)-lo)/4 + ch.off
				out := got[off : off+int64(T*ch.cols)]
				e := relErr64(out, ch.ref[:T*ch.cols])
				worst[i] = max(worst[i], e)
				tol := mmatTolerance(ch.y, strings.Contains(ch.name, "swiglu"))
				if e > tol {
					t.Errorf("%s, T=%d, %s: relative error %.2e (%s)", mode, T, ch.name, e, mmatWhere(out, ch.ref, h.tokens, T, ch.cols, tol))
				}
			}
		}
		for i, ch := range h.checks {
			t.Logf("%s %-14s max |gpu-ref|/max|ref| over T=%v: %.2e", mode, ch.name, steps, worst[i])
		}
		if err := dev.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// mmatWhere says where a step of T tokens' outputs got (cols a token) part
// from ref by more than tol of ref's largest: how many, in which 16-row
// tiles and rows of a tile, at which tokens, and how many hold instead
// the value of the poison step's token at the same place
// (stepAfterPoison: never written).
func mmatWhere(got []float32, ref []float64, n, T, cols int, tol float64) string {
	var m float64
	for _, v := range ref[:T*cols] {
		m = max(m, math.Abs(v))
	}
	tiles, rows, toks := map[int]int{}, map[int]int{}, map[int]int{}
	bad, stale := 0, 0
	for tok := range T {
		poison := (tok*37 + 11) % n
		for c := range cols {
			v := float64(got[tok*cols+c])
			if math.Abs(v-ref[tok*cols+c]) <= tol*m {
				continue
			}
			bad++
			tiles[c/16]++
			rows[c%16]++
			toks[tok]++
			if math.Abs(v-ref[poison*cols+c]) <= tol*m {
				stale++
			}
		}
	}
	keys := func(c map[int]int) []int {
		var k []int
		for i := range c {
			k = append(k, i)
		}
		slices.Sort(k)
		return k
	}
	return fmt.Sprintf("%d of %d off: tiles %v, rows of a tile %v, tokens %v; %d hold the poison step's value", bad, T*cols, keys(tiles), keys(rows), keys(toks), stale)
}

// TestGPUMMAHalvesRefused runs the mma_halves shape the passes refuse
// (clusters of one block over rows of two super-blocks, mmahRefused) on
// the harness's first weights and activations (x [T, 512], the products
// of a set, 8 warps, two clusters, as MMAHalvesShape chose it before),
// against the float64 reference at T = 1, 3, 9 and 16 (max_tokens 16).
// It fails on the H200 with CUDA 13.0 (Q4_K, Q5_K); it is to pass before
// the refusal goes, under the toolchain or kernel that would lift it
// (nvcc takes added flags from NVCC_APPEND_FLAGS). ORC_GPU_MMAH_REFUSED=1.
func TestGPUMMAHalvesRefused(t *testing.T) {
	gpuOnly(t)
	if os.Getenv("ORC_GPU_MMAH_REFUSED") != "1" {
		t.Skip("the refused mma_halves shape: set ORC_GPU_MMAH_REFUSED=1 too")
	}
	b := newMMATokBuilder(16, 35)
	x, table := b.embed("table", mmaTokIn)
	b.halvesSet(t, "refused", "h", x, table, 1)
	for n := range b.halves {
		b.shapes[n] = passes.MMAHalves{Cluster: 1, Warps: 8, XHalves: 1, Clusters: 2}
	}
	b.build(t).run(t, "clusters of one over rows of 512", []int{1, 3, 9, 16})
}

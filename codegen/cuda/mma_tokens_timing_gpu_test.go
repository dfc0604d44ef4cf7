package cuda_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
	rcuda "github.com/llama-orch/orc/runtime/cuda"
)

// mmatShape is one matrix of the mma_tokens timing plan: a linear of out
// rows, or a SwiGLU of out columns (gate and up rows packed, 2·out), over
// rows of in elements of type gt.
type mmatShape struct {
	name    string
	gt      gguf.Type
	out, in int64
	swiglu  bool
}

// The batched decode step's matrices: Phi-3-mini Q4_K_M's (its qkv as a
// linear of its 9216 rows: qkv_mmat streams as linear_mmat does) and
// Qwen2.5-0.5B's K-quant downs (56 tiles: the pass leaves them one round).
var mmatShapes = []mmatShape{
	{"Phi-3 qkv", gguf.Q5_K, 9216, 3072, false},
	{"Phi-3 gate+up", gguf.Q4_K, 8192, 3072, true},
	{"Phi-3 o-proj", gguf.Q4_K, 3072, 3072, false},
	{"Phi-3 down Q4_K", gguf.Q4_K, 3072, 8192, false},
	{"Phi-3 down Q6_K", gguf.Q6_K, 3072, 8192, false},
	{"Phi-3 head", gguf.Q6_K, 32064, 3072, false},
	{"Qwen down Q4_K", gguf.Q4_K, 896, 4864, false},
	{"Qwen down Q6_K", gguf.Q6_K, 896, 4864, false},
}

// mmatVariant is one form of the kernel: the one-round kernel, or the
// stream with its activations staged or read, in chunks of slabs slabs of
// passes.MMATokensSlab's; or mma_halves (halves > 0: in clusters of that
// many blocks, as passes.GPU.MMAHalvesCluster shapes them; -1: as
// chooseKernels would, passes.GPU.MMAHalvesShape; xh > 0: that shape with
// the activations in so many f16 halves, its clusters cut to those its
// shared memory leaves resident at once).
type mmatVariant struct {
	name           string
	stream, stageX bool
	slabs          int64
	halves, xh     int64
	most           int64 // mma_halves: that percentage of the clusters that run at once (a warp a tile at most); 0: the rule's
	perSM          int64 // mma_halves: as many clusters as put that many blocks on each SM (a warp a tile at most); 0: the rule's
}

var mmatVariants = []mmatVariant{
	{"one round", false, false, 0, 0, 0, 0, 0},
	{"stream x staged", true, true, 1, 0, 0, 0, 0}, {"stream x read", true, false, 1, 0, 0, 0, 0},
	{"stream x staged 2", true, true, 2, 0, 0, 0, 0}, {"stream x read 2", true, false, 2, 0, 0, 0, 0},
	{"halves chosen", false, false, 0, -1, 0, 0, 0}, {"halves x2", false, false, 0, -1, 2, 0, 0},
	{"halves C=1", false, false, 0, 1, 0, 0, 0}, {"halves C=2", false, false, 0, 2, 0, 0, 0}, {"halves C=3", false, false, 0, 3, 0, 0, 0},
	{"halves C=4", false, false, 0, 4, 0, 0, 0}, {"halves C=6", false, false, 0, 6, 0, 0, 0}, {"halves C=8", false, false, 0, 8, 0, 0, 0},
	{"halves most", false, false, 0, -1, 0, 100, 0}, {"halves C=2 most", false, false, 0, 2, 0, 100, 0},
	{"halves C=3 most", false, false, 0, 3, 0, 100, 0}, {"halves C=4 most", false, false, 0, 4, 0, 100, 0},
	{"halves C=6 most", false, false, 0, 6, 0, 100, 0}, {"halves C=8 most", false, false, 0, 8, 0, 100, 0},
	{"halves C=1 most", false, false, 0, 1, 0, 100, 0}, {"halves C=2 most90", false, false, 0, 2, 0, 90, 0},
	{"halves C=3 most90", false, false, 0, 3, 0, 90, 0}, {"halves C=4 most90", false, false, 0, 4, 0, 90, 0},
	{"halves C=6 most90", false, false, 0, 6, 0, 90, 0}, {"halves C=8 most90", false, false, 0, 8, 0, 90, 0},
	{"halves C=3 most75", false, false, 0, 3, 0, 75, 0}, {"halves C=4 most75", false, false, 0, 4, 0, 75, 0},
}

// mmahShapeOf is variant v's mma_halves shape for a matrix of tiles tiles
// of rows of in elements (false: it has none).
func mmahShapeOf(gpu passes.GPU, v mmatVariant, in, tiles, maxTokens int64) (passes.MMAHalves, bool) {
	sh, ok := gpu.MMAHalvesCluster(in, tiles, maxTokens, v.halves)
	if v.halves < 0 {
		sh, ok = gpu.MMAHalvesShape(in, tiles, maxTokens)
	}
	if ok && v.most > 0 {
		sh.Clusters = max(1, min(gpu.MMAHalvesResident(in, maxTokens, sh)*v.most/100, (tiles+sh.Warps-1)/sh.Warps))
	}
	if ok && v.perSM > 0 {
		sh.Clusters = max(1, min(gpu.SMs*v.perSM/sh.Cluster, (tiles+sh.Warps-1)/sh.Warps))
	}
	if ok && v.xh > 0 {
		sh.XHalves = v.xh
		resident := gpu.MMAHalvesResident(in, maxTokens, sh)
		if resident < 1 {
			return passes.MMAHalves{}, false
		}
		sh.Clusters = min(sh.Clusters, resident)
	}
	return sh, ok
}

// mmatTimingSlab is the rows of distinct weights each matrix tiles.
const mmatTimingSlab = 64

// TestGPUMMATokensTiming times the token-product kernels of the batched
// decode step at the real shapes (mmatShapes), each form side by side
// (mmatVariants: mma_tokens' and mma_halves'), at 2, 4, 8 and 16 tokens,
// beside the single-token decode kernel of the same weights (T = 1), and
// logs µs and TB/s of weights a launch; it checks each product against
// float64 (mmatTolerance) and asserts nothing about speed. The times are
// runtime/cuda's launch profile (Options.ProfileFile): each launch alone
// between two events, its ramp included, none of the overlap a graph gives.
// Every matrix of every form has its own weights (860 MB: far past L2), so
// no launch reads another's from L2. ORC_GPU_BENCH=1; ORC_MMAT_FORMS (form
// names, comma-separated) times those forms alone, ORC_MMAT_TOKENS (counts,
// comma-separated) those step sizes alone (for a profiler's launch count).
func TestGPUMMATokensTiming(t *testing.T) {
	gpuOnly(t)
	if os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("set ORC_GPU=1 ORC_GPU_BENCH=1 on a GPU host")
	}
	tp := newMMATTimingPlan(t, mmatFormsOf(t, os.Getenv("ORC_MMAT_FORMS")))
	g, man, prods, tables := tp.g, tp.man, tp.prods, tp.tables
	lo, hi := outputSpan(g, mmatTimingTokens)
	man.Model.Vocab = int((hi - lo) / 4)
	dir := writeEditedPlan(t, g, man, func(name string) []byte { return tp.data[name] }, func(k *plans.Kernels) { k.Logits = lo })

	for _, T := range mmatTimingSteps(t) {
		got, schedules := profiledSchedules(t, dir, 64, T)
		us := schedules["prefill"]
		if T == 1 { // the decode schedule's single-token kernels of the same weights
			t.Logf("T = 1: %-16s %10s %9s %8s  %s", "matrix", "bytes", "µs", "TB/s", "kernel")
			for _, sh := range mmatShapes {
				for _, p := range prods {
					if p.shape == sh {
						kernel, u := mmatSingleTime(schedules["decode"], sh)
						t.Logf("T = 1: %-16s %10d %9.1f %8.2f  %s", sh.name, p.bytes, u, float64(p.bytes)/u/1e6, kernel)
						break
					}
				}
			}
			continue
		}
		t.Logf("T = %d: %-16s %-17s %10s %9s %8s %9s  %s", T, "matrix", "form", "bytes", "µs", "TB/s", "rel_err", "kernel")
		for _, p := range prods {
			ref := mmatRef(p.shape, p.deq, tables[p.shape.in], T)
			off := (p.y.Attrs["offset"].(int64) - lo) / 4
			e := relErr64(got[off:off+int64(T)*p.shape.out], ref)
			if tol := mmatTolerance(p.y, p.shape.swiglu); e > tol {
				t.Errorf("T = %d, %s, %s: relative error %.2e", T, p.shape.name, p.variant.name, e)
			}
			kernel, u := mmatKernelTime(us, p.shape, p.variant, passes.MMATokensSlab(p.y.Inputs[1], p.shape.in), p.cluster, p.xh)
			t.Logf("T = %d: %-16s %-17s %10d %9.1f %8.2f %9.1e  %s (%d clusters)", T, p.shape.name, p.variant.name, p.bytes, u, float64(p.bytes)/u/1e6, e, kernel, p.clusters)
		}
	}
}

// mmatTimingSteps is the step sizes TestGPUMMATokensTiming times: 1, 2, 4,
// 8 and 16 tokens, or those ORC_MMAT_TOKENS lists (envInts).
func mmatTimingSteps(t *testing.T) []int {
	steps := envInts(t, "ORC_MMAT_TOKENS", []int{1, 2, 4, 8, 16})
	for _, T := range steps {
		if T > mmatTimingTokens {
			t.Fatalf("ORC_MMAT_TOKENS: %d is not a step of 1 to %d tokens", T, mmatTimingTokens)
		}
	}
	return steps
}

// mmatTimingTokens is the timing plan's max_tokens: a batched decode
// step's most rows.
const mmatTimingTokens = 16

// mmatProduct is one product of the timing plan: a shape in a form, its
// output node, the slab's dequantized rows, its weights' bytes and its
// mma_halves cluster and activations' halves.
type mmatProduct struct {
	shape       mmatShape
	variant     mmatVariant
	y           *ir.Node
	deq         []float32 // [mmatTimingSlab, in]
	bytes       int64
	cluster, xh int64 // mma_halves'
	clusters    int64 // mma_halves' grid of clusters
}

// mmatTimingPlan is the timing plan before its kernels are compiled: the
// graph after the GPU passes, each product's kernel recorded, the
// manifest, the weights' and tables' bytes by name, the activations by row
// length ([max tokens, in]) and the products.
type mmatTimingPlan struct {
	g      *ir.Graph
	man    *plans.Manifest
	data   map[string][]byte
	tables map[int64][]float32
	prods  []*mmatProduct
}

// mmatFormsOf is the variants named in forms (comma-separated
// mmatVariant names, or "halves C=c xn": clusters of c blocks, as many as
// put n blocks on each SM; empty: all of them), so that a GPU call can time a few
// forms within its limit.
func mmatFormsOf(t *testing.T, forms string) []mmatVariant {
	t.Helper()
	if forms == "" {
		return mmatVariants
	}
	var vs []mmatVariant
	for _, name := range strings.Split(forms, ",") {
		var c, per int64
		if n, _ := fmt.Sscanf(name, "halves C=%d x%d", &c, &per); n == 2 && c > 0 && per > 0 {
			vs = append(vs, mmatVariant{name: name, halves: c, perSM: per})
			continue
		}
		i := slices.IndexFunc(mmatVariants, func(v mmatVariant) bool { return v.name == name })
		if i < 0 {
			t.Fatalf("ORC_MMAT_FORMS: no form %q", name)
		}
		vs = append(vs, mmatVariants[i])
	}
	return vs
}

// newMMATTimingPlan builds the timing plan of every shape (mmatShapes) in
// each of variants, each product with weights of its own, and runs the GPU
// passes on it, recording each product's form.
func newMMATTimingPlan(t *testing.T, variants []mmatVariant) *mmatTimingPlan {
	t.Helper()
	const maxTokens = mmatTimingTokens
	r := rand.New(rand.NewPCG(35, 16))
	gpu, err := passes.GPUTarget("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	g := ir.New()
	g.Attrs["max_tokens"] = int64(maxTokens)
	man := &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model:  plans.Model{Name: "mmat_timing", Arch: "mmat_timing", NLayer: 1, ContextLength: 64},
		Memory: plans.Memory{MaxTokens: maxTokens}}
	data := map[string][]byte{}
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	tables := map[int64][]float32{} // by row length: [maxTokens, in]
	xs := map[int64]*ir.Node{}
	x := func(in int64) *ir.Node {
		if xs[in] == nil {
			tab := make([]float32, maxTokens*in)
			for i := range tab {
				tab[i] = float32(r.NormFloat64())
			}
			name := fmt.Sprintf("table%d", in)
			tables[in], data[name] = tab, f32Bytes(tab)
			man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: "f32", Shape: []int64{maxTokens, in}, Bytes: 4 * int64(len(tab))})
			w := g.Add(ir.OpWeight, ir.F32, ir.Shape{maxTokens, in}, map[string]any{"name": name})
			xs[in] = g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, in}, nil, w, tok)
		}
		return xs[in]
	}
	var prods []*mmatProduct
	for _, sh := range mmatShapes {
		dt, ok := ir.ParseDType(strings.ToLower(sh.gt.String()))
		if !ok {
			t.Fatalf("no ir dtype for %s", sh.gt)
		}
		rows := sh.out
		if sh.swiglu {
			rows *= 2
		}
		slab, deq := randomSlab(t, r, sh.gt, mmatTimingSlab*int(sh.in))
		wdata := tile(slab, int(rows/mmatTimingSlab))
		laid := &ir.Node{Op: ir.OpWeight, DType: dt, Shape: ir.Shape{rows, sh.in}, Attrs: map[string]any{"layout": passes.LayoutName(dt)}}
		for _, v := range variants {
			tiles := rows / 16 // of a linear; a SwiGLU's: columns / 8
			if _, ok := mmahShapeOf(gpu, v, sh.in, tiles, maxTokens); v.halves != 0 && !ok {
				t.Logf("%s, %s: no such shape", sh.name, v.name)
				continue
			}
			if v.stream {
				if _, ok := gpu.MMATokensStreams(laid, sh.in, tiles, v.slabs*passes.MMATokensSlab(laid, sh.in), v.stageX); !ok {
					t.Logf("%s, %s: no such stream", sh.name, v.name)
					continue
				}
			}
			name := fmt.Sprintf("w%d", len(prods))
			data[name] = wdata
			man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: dt.String(), Shape: []int64{rows, sh.in}, Bytes: int64(len(wdata))})
			w := g.Add(ir.OpWeight, dt, ir.Shape{rows, sh.in}, map[string]any{"name": name})
			op := ir.OpLinear
			if sh.swiglu {
				op = ir.OpSwiGLULinear
			}
			p := &mmatProduct{shape: sh, variant: v, deq: deq, bytes: int64(len(wdata))}
			p.y = g.Add(op, ir.F32, ir.Shape{ir.T, sh.out}, nil, x(sh.in), w)
			g.Outputs = append(g.Outputs, p.y)
			prods = append(prods, p)
		}
	}
	after := runGPUPasses(t, g, man)
	for _, p := range prods {
		p.y = after[p.y]
		p.y.Attrs["prefill_kernel"] = ir.KernelMMATokens
		if p.variant.halves != 0 {
			sh, ok := mmahShapeOf(gpu, p.variant, p.shape.in, passes.MMATokenTiles(p.y), maxTokens)
			if !ok {
				t.Fatalf("%s, %s: no mma_halves shape", p.shape.name, p.variant.name)
			}
			p.y.Attrs["prefill_kernel"] = ir.KernelMMAHalves
			sh.Record(p.y)
			p.cluster, p.xh, p.clusters = sh.Cluster, sh.XHalves, sh.Clusters
		}
		if p.variant.stream {
			w := p.y.Inputs[1]
			slab := p.variant.slabs * passes.MMATokensSlab(w, p.shape.in)
			if _, ok := gpu.MMATokensStreams(w, p.shape.in, passes.MMATokenTiles(p.y), slab, p.variant.stageX); !ok {
				t.Fatalf("%s, %s: weight %s [%v %s] does not stream in slabs of %d", p.shape.name, p.variant.name, w.Str("name"), w.DType, w.Str("layout"), slab)
			}
			p.y.Attrs["mmat_slab"] = slab
			p.y.Attrs["mmat_stage_x"] = p.variant.stageX
		}
	}
	// The launch profile times kernels by name, and a shape's mma_halves
	// forms of one cluster size and halves are one
	// kernel on different grids: their times are one average. Forms named in
	// ORC_MMAT_FORMS must not share one; of all of them, the log says which.
	for i, p := range prods {
		for _, q := range prods[:i] {
			if p.variant.halves != 0 && q.variant.halves != 0 && p.shape == q.shape && p.cluster == q.cluster && p.xh == q.xh && p.clusters != q.clusters {
				msg := fmt.Sprintf("%s: forms %q and %q are one kernel on %d and %d clusters, timed together; time them in separate runs (ORC_MMAT_FORMS)", p.shape.name, q.variant.name, p.variant.name, q.clusters, p.clusters)
				if os.Getenv("ORC_MMAT_FORMS") != "" {
					t.Fatal(msg)
				}
				t.Log(msg)
			}
		}
	}
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	return &mmatTimingPlan{g: g, man: man, data: data, tables: tables, prods: prods}
}

// mmatRef is the float64 products of tokens 0..T-1 of table (rows of in)
// with the slab's rows deq as shape tiles them: [T, out].
func mmatRef(sh mmatShape, deq, table []float32, T int) []float64 {
	dot := func(tok int, row int64) float64 {
		var s float64
		w := deq[(row%mmatTimingSlab)*sh.in : (row%mmatTimingSlab+1)*sh.in]
		for i, v := range table[int64(tok)*sh.in : int64(tok+1)*sh.in] {
			s += float64(w[i]) * float64(v)
		}
		return s
	}
	out := make([]float64, int64(T)*sh.out)
	for tok := range T {
		for o := range sh.out {
			if sh.swiglu {
				out[int64(tok)*sh.out+o] = swigluOf([]float64{dot(tok, o)}, []float64{dot(tok, sh.out+o)})[0]
			} else {
				out[int64(tok)*sh.out+o] = dot(tok, o)
			}
		}
	}
	return out
}

// profiledSteps opens the plan in dir with a context of ctx under a launch
// profile, runs 6 steps of tokens 0..T-1, each in a new sequence, and
// returns the last step's logits and the profile's µs a prefill launch by
// kernel (launchMicros).
func profiledSteps(t *testing.T, dir string, ctx, T int) ([]float32, map[string]float64) {
	t.Helper()
	got, schedules := profiledSchedules(t, dir, ctx, T)
	us := schedules["prefill"]
	if len(us) == 0 {
		t.Fatalf("no prefill kernels in the profile of %d tokens", T)
	}
	return got, us
}

// profiledSchedules is profiledSteps with every schedule's µs a launch by
// kernel (a step of one token runs the decode schedule).
func profiledSchedules(t *testing.T, dir string, ctx, T int) ([]float32, map[string]map[string]float64) {
	t.Helper()
	profile := filepath.Join(t.TempDir(), fmt.Sprintf("profile-%d.txt", T))
	dev := openPlanDir(t, dir, rcuda.Options{Ctx: ctx, ProfileFile: profile})
	tokens := make([]int32, T)
	for i := range tokens {
		tokens[i] = int32(i)
	}
	var got []float32
	for range 6 {
		seq, err := dev.NewSequence(T)
		if err != nil {
			t.Fatal(err)
		}
		if got, err = seq.Forward(context.Background(), tokens); err != nil {
			t.Fatal(err)
		}
		got = slices.Clone(got)
		seq.Close()
	}
	if err := dev.Close(); err != nil { // writes the profile
		t.Fatal(err)
	}
	us := launchMicros(t, profile)
	if len(us["prefill"]) == 0 && len(us["decode"]) == 0 {
		t.Fatalf("no prefill or decode kernels in the profile %s", profile)
	}
	return got, us
}

// mmatDims is the part of shape sh's kernel names that its widths and
// weight type give: the family's prefix ("linear_" or "swiglu_"), the
// widths as template arguments, the accessor's type.
func mmatDims(sh mmatShape) (family, dims, wtype string) {
	family, dims = "linear_", fmt.Sprintf("_%d_%d_", sh.in, sh.out)
	if sh.swiglu {
		family, dims = "swiglu_", fmt.Sprintf("_%d_%d_%d_", sh.in, sh.out, sh.out)
	}
	return family, dims, "_W_" + strings.ToLower(sh.gt.String()) + "_"
}

// mmatKernelTime finds shape's kernel of variant v (slab: the shape's
// passes.MMATokensSlab; cluster, xh: its mma_halves shape) in a profile's
// times: its name and µs a launch (0 where none matches).
func mmatKernelTime(us map[string]float64, sh mmatShape, v mmatVariant, slab, cluster, xh int64) (string, float64) {
	family, dims, wtype := mmatDims(sh)
	fn := family + "mmat"
	if v.halves != 0 {
		fn = family + "mmah"
	}
	for k, u := range us {
		streams := strings.HasPrefix(k, fn+"_stream_")
		if !strings.HasPrefix(k, fn+"_") || !strings.Contains(k, dims) || !strings.Contains(k, wtype) || streams != v.stream {
			continue
		}
		if v.stream && !strings.Contains(k, fmt.Sprintf("_%d_%v_", v.slabs*slab, v.stageX)) {
			continue
		}
		if v.halves != 0 && !mmahNamed(k, cluster, xh) {
			continue
		}
		return k, u
	}
	return "", 0
}

// mmahNamed reports whether kernel name k is an mma_halves kernel's of
// clusters of cluster blocks of 8 warps and x in xh halves: after them
// its n-tiles and rows, the last template arguments.
func mmahNamed(k string, cluster, xh int64) bool {
	tag := fmt.Sprintf("_%d_8_%d_", cluster, xh)
	i := strings.LastIndex(k, tag)
	return i >= 0 && len(strings.Split(k[i+len(tag):], "_")) == 2
}

// mmatSingleTime finds shape's single-token kernel (the decode schedule's
// linear or SwiGLU over its weights) in a profile's decode times.
func mmatSingleTime(us map[string]float64, sh mmatShape) (string, float64) {
	family, dims, wtype := mmatDims(sh)
	for k, u := range us {
		if strings.HasPrefix(k, family) && strings.Contains(k, dims) && strings.Contains(k, wtype) {
			return k, u
		}
	}
	return "", 0
}

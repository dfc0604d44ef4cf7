package cuda_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/quant"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/cpu"
	rcuda "github.com/llama-orch/orc/runtime/cuda"
)

// The GPU harness runs on the GPU host: build it here with
// CGO_ENABLED=1 go test -c -o .gpu/codegen/cuda.test ./codegen/cuda
// and run it there with ORC_GPU=1 .gpu/codegen/cuda.test -test.run GPU -test.v.
// It compiles with the host's nvcc and executes the schedules through the
// runtime's C layer (runtime/cuda), comparing with CPU references.
func gpuOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("ORC_GPU") != "1" {
		t.Skip("GPU harness: set ORC_GPU=1 on a machine with an NVIDIA GPU and nvcc")
	}
}

var fatbins sync.Map // [32]byte source hash → nvcc output: identical sources compile once

// fatbin compiles src with the host's nvcc, once per distinct source; safe
// from parallel subtests (distinct sources compile concurrently).
func fatbin(src string) ([]byte, error) {
	key := sha256.Sum256([]byte(src))
	if fb, ok := fatbins.Load(key); ok {
		return fb.([]byte), nil
	}
	fb, err := cuda.Compile(src, cuda.DefaultArch)
	if err != nil {
		return nil, err
	}
	fatbins.Store(key, fb)
	return fb, nil
}

// openGPUPlan generates and compiles g's kernels, writes the plan (weights
// re-laid out by cuda.Relayout, data(name) giving GGUF-order bytes) and
// opens it on GPU 0.
func openGPUPlan(t *testing.T, g *ir.Graph, man *plans.Manifest, ctx int, data func(name string) []byte) *rcuda.Device {
	t.Helper()
	return openEditedPlan(t, g, man, ctx, data, func(*plans.Kernels) {})
}

// outputSpan is the arena span [lo, hi) holding g's outputs at rows rows
// each, which a test plan's "logits" cover so that one Forward reads them
// all back.
func outputSpan(g *ir.Graph, rows int64) (lo, hi int64) {
	lo = math.MaxInt64
	for _, y := range g.Outputs {
		off := y.Attrs["offset"].(int64)
		lo, hi = min(lo, off), max(hi, off+4*rows*y.Shape[1])
	}
	return lo, hi
}

// openEditedPlan is openGPUPlan with edit applied to the generated schedules
// before the plan is written (the source is unchanged).
func openEditedPlan(t *testing.T, g *ir.Graph, man *plans.Manifest, ctx int, data func(name string) []byte, edit func(*plans.Kernels)) *rcuda.Device {
	t.Helper()
	return openPlanDir(t, writeEditedPlan(t, g, man, data, edit), rcuda.Options{Ctx: ctx})
}

// writeEditedPlan generates and compiles g's kernels, applies edit to the
// schedules and writes the plan (weights as openGPUPlan writes them) into
// a directory of the test's, which it returns.
func writeEditedPlan(t *testing.T, g *ir.Graph, man *plans.Manifest, data func(name string) []byte, edit func(*plans.Kernels)) string {
	t.Helper()
	out, err := cuda.Generate(g, man, cuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	edit(out.Kernels)
	return writeGenerated(t, out, man, data)
}

// openGenerated writes the plan of man with out's kernels and opens it on
// GPU 0, as openGPUPlan.
func openGenerated(t *testing.T, out *cuda.Output, man *plans.Manifest, ctx int, data func(name string) []byte) *rcuda.Device {
	t.Helper()
	return openPlanDir(t, writeGenerated(t, out, man, data), rcuda.Options{Ctx: ctx})
}

// writeGenerated compiles out's source and writes the plan of man with its
// kernels (weights as openGPUPlan writes them) into a directory of the
// test's, which it returns.
func writeGenerated(t *testing.T, out *cuda.Output, man *plans.Manifest, data func(name string) []byte) string {
	t.Helper()
	fb, err := fatbin(out.Source)
	if err != nil {
		t.Fatal(err)
	}
	man.Kernels, man.Memory.ArenaBytes = out.Kernels, out.ArenaBytes
	placed := make([]int64, len(man.Tensors))
	for i, pt := range man.Tensors {
		placed[i] = pt.Offset
	}
	dir := filepath.Join(t.TempDir(), "plan")
	err = plans.Write(dir, man, func(i int, pt *plans.Tensor, w io.Writer) error {
		b, err := cuda.Relayout(pt, data(pt.Name))
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}, map[string][]byte{plans.KernelsFile: fb, plans.SourceFile: []byte(out.Source)})
	if err != nil {
		t.Fatal(err)
	}
	for i, pt := range man.Tensors {
		if pt.Offset != placed[i] {
			t.Fatalf("plans.Write placed %s at %d, the schedules assumed %d", pt.Name, pt.Offset, placed[i])
		}
	}
	return dir
}

// openPlanDir opens the plan in dir on GPU 0 with options o, closed when
// the test ends.
func openPlanDir(t *testing.T, dir string, o rcuda.Options) *rcuda.Device {
	t.Helper()
	p, err := plans.Open(dir, plans.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := rcuda.Open(p, 0, o)
	p.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	return dev
}

// openCPU compiles a GGUF model for the CPU reference device and opens it.
func openCPU(t *testing.T, path string, maxTokens int) *cpu.Device {
	t.Helper()
	return openCPUWith(t, path, maxTokens, cpu.Options{})
}

// openCPUWith is openCPU with the device's options o.
func openCPUWith(t *testing.T, path string, maxTokens int, o cpu.Options) *cpu.Device {
	t.Helper()
	return openCPUKV(t, path, maxTokens, "", o)
}

// openCPUKV is openCPUWith with the KV cache format kv.
func openCPUKV(t *testing.T, path string, maxTokens int, kv string, o cpu.Options) *cpu.Device {
	t.Helper()
	cdir := filepath.Join(t.TempDir(), "cpu")
	if err := compiler.Compile(compiler.Options{Model: path, Out: cdir, Target: "cpu", MaxTokens: maxTokens, KVCache: kv}); err != nil {
		t.Fatal(err)
	}
	cp, err := plans.Open(cdir, plans.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cdev, err := cpu.Open(cp, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cdev.Close() })
	return cdev
}

// relErr is max|got-want| / max|want|; NaN counts as infinitely wrong.
func relErr(got, want []float32) float64 {
	var d, m float64
	for i := range want {
		e := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(e) {
			return math.Inf(1)
		}
		d, m = max(d, e), max(m, math.Abs(float64(want[i])))
	}
	return d / m
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// GEMV anchor shape (BENCHMARKS.md, the peer): weight [4096 out, 14336 in].
const gemvOut, gemvIn, gemvSlab = 4096, 14336, 256

var gemvTypes = []gguf.Type{gguf.F32, gguf.F16, gguf.BF16, gguf.Q4_0, gguf.Q5_0, gguf.Q8_0, gguf.Q4_K, gguf.Q5_K, gguf.Q6_K, gguf.MXFP4}

// TestGPUGEMV checks the decode GEMV of every weight type at 4096×14336
// against quant.Dequantize in float64, and times it: a plan of 8 GEMVs over
// 8 distinct weights (1.9 GB for f32, never L2-resident) against a plan of
// one, both replayed as decode graphs; the difference over 7 is one GEMV.
func TestGPUGEMV(t *testing.T) {
	gpuOnly(t)
	r := rand.New(rand.NewPCG(5, 6))
	t.Logf("%-6s %10s %10s %10s %9s", "type", "bytes", "time_us", "GB/s", "rel_err")
	for _, gt := range gemvTypes {
		if !gemvTypeSelected(gt) {
			continue
		}
		gemvCase(t, r, gt, gemvOut, gemvIn, gemvSlab)
	}
}

// gemvTypeSelected reports whether the GEMV harness runs type gt:
// ORC_GEMV_TYPES (e.g. "Q4_0,Q4_K") selects a subset, for profiling.
func gemvTypeSelected(gt gguf.Type) bool {
	only := os.Getenv("ORC_GEMV_TYPES")
	return only == "" || slices.Contains(strings.Split(only, ","), gt.String())
}

// TestGPUSmallGEMV runs the decode GEMVs of model shapes on the integer
// path against the same float64 reference as TestGPUGEMV: Qwen2.5-0.5B's
// shapes (down 4864 → 896, o-proj 896 → 896), where each block quantizes x,
// an embedding's output here, itself (no quantize_x8 launch) and fetches its
// first weight groups before waiting for the grid before it (ops_linear.go:
// stagesX, fetchesEarly), and
// Phi-3-mini's Q4_K_M ones (3072-wide rows: 48 K-quant groups) as linears
// (qkv_q8 and swiglu_q8 share linear_q8's rows_dot8 and its 4 rows a lane
// set): qkv 3072 → 9216 (Q5_K), gate+up 3072 → 16384 and o-proj 3072 →
// 3072 (Q4_K), down 8192 → 3072 (Q4_K, Q6_K), head 3072 → 32064 (Q6_K);
// their times include a quantize_x8 launch, as x comes from an embedding.
// ORC_GEMV_TYPES selects types as in TestGPUGEMV. Small weights stay partly
// L2-resident across the timed replays (50 MB of L2 on an H100).
func TestGPUSmallGEMV(t *testing.T) {
	gpuOnly(t)
	r := rand.New(rand.NewPCG(7, 8))
	t.Logf("%-6s %10s %10s %10s %9s", "type", "bytes", "time_us", "GB/s", "rel_err")
	smallInts := []gguf.Type{gguf.Q4_0, gguf.Q5_0, gguf.Q8_0, gguf.Q4_K, gguf.Q6_K}
	for _, c := range []struct {
		out, in, slab int
		types         []gguf.Type
	}{
		{896, 4864, 128, smallInts},
		{896, 896, 128, smallInts},
		{9216, 3072, 64, []gguf.Type{gguf.Q5_K}},
		{16384, 3072, 64, []gguf.Type{gguf.Q4_K}},
		{3072, 8192, 64, []gguf.Type{gguf.Q4_K, gguf.Q6_K}},
		{3072, 3072, 64, []gguf.Type{gguf.Q4_K}},
		{32064, 3072, 64, []gguf.Type{gguf.Q6_K}},
	} {
		for _, gt := range c.types {
			if c.in%256 != 0 && (gt == gguf.Q4_K || gt == gguf.Q6_K) {
				continue // 896 is not whole 256-element K-quant blocks
			}
			if !gemvTypeSelected(gt) {
				continue
			}
			t.Logf("%d -> %d", c.in, c.out)
			gemvCase(t, r, gt, c.out, c.in, c.slab)
		}
	}
}

// gemvCase times one decode GEMV [out, in] of type gt inside a decode graph
// (8 GEMVs against 1, as TestGPUGEMV describes), its weight a random slab
// of slab rows tiled to out, and checks it against a float64 dot.
func gemvCase(t *testing.T, r *rand.Rand, gt gguf.Type, out, in, slab int) {
	t.Helper()
	dt, ok := ir.ParseDType(strings.ToLower(gt.String()))
	if !ok {
		t.Fatalf("no ir dtype for %s", gt)
	}
	rows, deq := randomSlab(t, r, gt, slab*in)
	table := make([]float32, 4*in)
	for i := range table {
		table[i] = float32(r.NormFloat64())
	}
	weight := tile(rows, out/slab)
	data := func(name string) []byte {
		if name == "table" {
			return f32Bytes(table)
		}
		return weight
	}
	const tok = 1
	want := make([]float32, out)
	x := table[tok*in : (tok+1)*in]
	for o := range want {
		row := deq[(o%slab)*in : (o%slab+1)*in]
		var s float64
		for i, w := range row {
			s += float64(w) * float64(x[i])
		}
		want[o] = float32(s)
	}
	var times [2]time.Duration
	var got []float32
	for i, k := range []int{1, 8} {
		g, man := gemvGraph(t, dt, k, int64(out), int64(in), int64(len(weight)))
		dev := openGPUPlan(t, g, man, 16, data)
		times[i], got = timeDecode(t, dev, tok+1, tok)
		dev.Close()
	}
	per := (times[1] - times[0]) / 7
	gbs := float64(len(weight)) / per.Seconds() / 1e9
	t.Logf("%-6s %10d %10.1f %10.0f %9.1e", gt, len(weight), float64(per.Nanoseconds())/1e3, gbs, relErr(got, want))
	if e := relErr(got, want); e > gemvTolerance(gt) {
		t.Errorf("%s GEMV %d -> %d: relative error %.2e", gt, in, out, e)
	}
}

// gemvGraph is x = embed(table, tokens); y_i = linear(x, w_i [out, in]) for i < k; the
// logits are last(y_{k-1}) and the other y_i are outputs so they stay.
func gemvGraph(t *testing.T, dt ir.DType, k int, out, in, wbytes int64) (*ir.Graph, *plans.Manifest) {
	t.Helper()
	g, x, man := tableGraph("gemv", in, out)
	var ys []*ir.Node
	for i := range k {
		name := fmt.Sprintf("w%d", i)
		w := g.Add(ir.OpWeight, dt, ir.Shape{out, in}, map[string]any{"name": name})
		ys = append(ys, g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, out}, nil, x, w))
		man.Tensors = append(man.Tensors, plans.Tensor{Name: name, DType: dt.String(), Shape: []int64{out, in}, Bytes: wbytes})
	}
	last := g.Add(ir.OpLast, ir.F32, ir.Shape{1, out}, nil, ys[k-1])
	g.Outputs = append([]*ir.Node{last}, ys[:k-1]...)
	runGPUPasses(t, g, man)
	return g, man
}

// tableGraph starts a one-layer test graph named name: x = embed(table [4,
// in], tokens), its manifest holding the table and vocab logits.
func tableGraph(name string, in, vocab int64) (*ir.Graph, *ir.Node, *plans.Manifest) {
	g := ir.New()
	g.Attrs["max_tokens"] = int64(4)
	tok := g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	tab := g.Add(ir.OpWeight, ir.F32, ir.Shape{4, in}, map[string]any{"name": "table"})
	x := g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, in}, nil, tab, tok)
	man := &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
		Model:   plans.Model{Name: name, Arch: name, NLayer: 1, Vocab: int(vocab), ContextLength: 16},
		Memory:  plans.Memory{MaxTokens: 4},
		Tensors: []plans.Tensor{{Name: "table", DType: "f32", Shape: []int64{4, in}, Bytes: 4 * 4 * in}}}
	return g, x, man
}

// runGPUPasses runs the GPU pipeline on a hand-built graph and completes its
// manifest: the layouts the passes chose, placed offsets, the graph. It
// returns each output node as the passes left it, by the node it was
// before (they may replace nodes).
func runGPUPasses(t *testing.T, g *ir.Graph, man *plans.Manifest) map[*ir.Node]*ir.Node {
	t.Helper()
	before := slices.Clone(g.Outputs)
	if err := passes.Run(g, passes.Options{Target: "sm_90", Verify: true}); err != nil {
		t.Fatal(err)
	}
	after := make(map[*ir.Node]*ir.Node, len(before))
	for i, o := range before {
		after[o] = g.Outputs[i]
	}
	for _, n := range g.Nodes {
		for i := range man.Tensors {
			if n.Op == ir.OpWeight && n.Str("name") == man.Tensors[i].Name {
				man.Tensors[i].Layout = n.Str("layout")
			}
		}
	}
	placeTensors(man.Tensors)
	man.Graph = ir.Print(g)
	return after
}

// timeDecode runs decode steps repeatedly, of token prev and token tok in
// turn and ending on tok, and returns the median step time and the last
// logits. The input changes every step, so a kernel that read its input
// before waiting for the grid that writes it (the previous step's value:
// common.cu.tmpl, acquire) gives wrong logits here; one repeated token hid
// that.
func timeDecode(t *testing.T, dev runtime.Device, prev, tok int32) (time.Duration, []float32) {
	t.Helper()
	seq, err := dev.NewSequence(16)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	var logits []float32
	var ts []time.Duration
	for i := range 60 {
		if seq.Pos() >= 15 {
			seq.Close()
			if seq, err = dev.NewSequence(16); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		id := tok
		if i%2 == 0 {
			id = prev
		}
		if logits, err = seq.Forward(context.Background(), []int32{id}); err != nil {
			t.Fatal(err)
		}
		if i >= 10 {
			ts = append(ts, time.Since(start))
		}
	}
	slices.Sort(ts)
	return ts[len(ts)/2], slices.Clone(logits)
}

// gemvTolerance is the relative error a GEMV may have: float rounding for
// the float types, and for the quantized ones (all on the integer path)
// the int16 rounding of the activations (one part in 65534 per element,
// mostly averaging out).
func gemvTolerance(gt gguf.Type) float64 {
	switch gt {
	case gguf.F32, gguf.F16, gguf.BF16:
		return 1e-4
	}
	return 2e-4
}

func tile(b []byte, n int) []byte {
	out := make([]byte, 0, len(b)*n)
	for range n {
		out = append(out, b...)
	}
	return out
}

func f32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		u := math.Float32bits(v)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return b
}

// randomSlab draws n normal values and encodes them as type gt with
// quant.Quantize where the type has an encoder; otherwise (Q5_K) it draws
// random blocks whose two leading f16 scales (d, dmin) are set to sane
// values, which is all a matrix test needs. It returns the blocks and their
// dequantized values, the reference's weights.
func randomSlab(t *testing.T, r *rand.Rand, gt gguf.Type, n int) ([]byte, []float32) {
	t.Helper()
	var b []byte
	switch {
	case quant.Encodable(gt):
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		var err error
		if b, err = quant.Quantize(gt, src); err != nil {
			t.Fatal(err)
		}
	case gt == gguf.Q5_K:
		b = make([]byte, gt.RowBytes(int64(n)))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		for o := 0; o < len(b); o += gt.BlockBytes() {
			b[o], b[o+1] = 0x1f, 0x20   // d = 0.0079 (f16 0x201f)
			b[o+2], b[o+3] = 0x1f, 0x1c // dmin = 0.0040 (f16 0x1c1f)
		}
	default:
		t.Fatalf("no way to make %s blocks", gt)
	}
	deq := make([]float32, n)
	if err := quant.Dequantize(gt, b, deq); err != nil {
		t.Fatal(err)
	}
	return b, deq
}

package cuda

// GPU tests: they run only with ORC_GPU_TESTS=1, on a machine with an
// NVIDIA driver. Build here, run there:
//
//	CGO_ENABLED=1 go test -c -o .gpu/rt/cuda.test ./runtime/cuda
//	ORC_GPU_TESTS=1 .gpu/rt/cuda.test -test.v -test.run GPU

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

// hand.ptx is written by hand (no compiler): iota_add, add_state and
// smem_split.
//
//go:embed testdata/hand.ptx
var handPTX []byte

func testGPU(t *testing.T) *gpu {
	t.Helper()
	if !gpuTests() {
		t.Skip("set ORC_GPU_TESTS=1 on a GPU host")
	}
	g, err := openGPU(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.close(); err != nil {
			t.Error(err)
		}
	})
	return g
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func freeMem(t *testing.T, g *gpu) int64 {
	t.Helper()
	free, _, err := g.memInfo()
	if err != nil {
		t.Fatal(err)
	}
	return free
}

func u64s(b []byte) []uint64 {
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out
}

func TestGPUPTXRoundTrip(t *testing.T) {
	g := testGPU(t)
	t.Logf("%s %s, driver %d, %d SMs", g.name(), g.sm(), g.driverVersion(), g.d.sm_count)
	mod := must[module](t)(g.moduleLoad(handPTX))
	defer g.moduleUnload(mod)
	fn := must[uint64](t)(g.function(mod, "iota_add", 0))
	const n = 100_003
	out := must[devptr](t)(g.alloc(8 * n))
	defer g.free(out)
	// Poison first, so an unwritten element shows.
	if err := g.memset(out, 0xAB, 8*n); err != nil {
		t.Fatal(err)
	}
	b := &batch{
		launches: []launchRec{{fn: fn, grid: [3]uint32{(n + 255) / 256, 1, 1}, block: [3]uint32{256, 1, 1}, argc: 3}},
		argv:     []uint64{uint64(out), n, 41},
	}
	if err := g.launch(b); err != nil {
		t.Fatal(err)
	}
	host := make([]byte, 8*n)
	if err := g.copyDtoH(host, out); err != nil {
		t.Fatal(err)
	}
	for i, v := range u64s(host) {
		if v != 3*uint64(i)+41 {
			t.Fatalf("out[%d] = %d, want %d", i, v, 3*i+41)
		}
	}
}

// TestGPUStaticAndDynamicSharedMemory: a kernel whose static shared memory
// (40 KiB) and dynamic bytes (16 KiB) together pass 48 KiB launches (its
// dynamic limit raised though its dynamic bytes alone are under 48 KiB) and
// reads the last of them; asking for more than the GPU allows a block fails
// at load, naming both parts.
func TestGPUStaticAndDynamicSharedMemory(t *testing.T) {
	g := testGPU(t)
	mod := must[module](t)(g.moduleLoad(handPTX))
	defer g.moduleUnload(mod)
	const dyn, threads = 16 << 10, 256
	fn := must[uint64](t)(g.function(mod, "smem_split", dyn))
	out := must[devptr](t)(g.alloc(4 * threads))
	defer g.free(out)
	b := &batch{
		launches: []launchRec{{fn: fn, grid: [3]uint32{1, 1, 1}, block: [3]uint32{threads, 1, 1}, smem: dyn, argc: 2}},
		argv:     []uint64{uint64(out), dyn},
	}
	if err := g.launch(b); err != nil {
		t.Fatal(err)
	}
	host := make([]byte, 4*threads)
	if err := g.copyDtoH(host, out); err != nil {
		t.Fatal(err)
	}
	for i := range threads {
		if v := binary.LittleEndian.Uint32(host[4*i:]); v != uint32(3*i+7) {
			t.Fatalf("out[%d] = %d, want %d", i, v, 3*i+7)
		}
	}
	over := int(g.d.smem_optin) - 40<<10 + 16
	if _, err := g.function(mod, "smem_split", over); err == nil || !strings.Contains(err.Error(), "40960 static") {
		t.Fatalf("%d dynamic bytes past 40 KiB static: err %v, want one naming the static bytes", over, err)
	}
}

func TestGPUGraphReplay(t *testing.T) {
	g := testGPU(t)
	mod := must[module](t)(g.moduleLoad(handPTX))
	defer g.moduleUnload(mod)
	fn := must[uint64](t)(g.function(mod, "add_state", 0))
	const n = 1000
	out := must[devptr](t)(g.alloc(8 * n))
	defer g.free(out)
	state := must[devptr](t)(g.alloc(8))
	defer g.free(state)
	if err := g.memset(out, 0, 8*n); err != nil {
		t.Fatal(err)
	}
	rec := launchRec{fn: fn, grid: [3]uint32{(n + 127) / 128, 1, 1}, block: [3]uint32{128, 1, 1}, argc: 3}
	// Two launches per graph: each replay adds 2·(state+i).
	b := &batch{launches: []launchRec{rec, rec}, argv: []uint64{uint64(out), uint64(state), n, uint64(out), uint64(state), n}}
	if err := g.captureBegin(); err != nil {
		t.Fatal(err)
	}
	if err := g.launch(b); err != nil {
		t.Fatal(err)
	}
	x := must[graph](t)(g.captureEnd())
	defer g.graphDestroy(x)
	// Capture ran nothing: out is still zero.
	host := make([]byte, 8*n)
	if err := g.copyDtoH(host, out); err != nil {
		t.Fatal(err)
	}
	if u64s(host)[5] != 0 {
		t.Fatal("capturing executed the kernels")
	}
	pinned := must[[]byte](t)(g.hostAlloc(8))
	defer g.hostFree(pinned)
	var sum uint64
	for step := uint64(1); step <= 20; step++ {
		if err := g.sync(); err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint64(pinned, step*step)
		sum += step * step
		if err := g.copyHtoD(state, pinned); err != nil {
			t.Fatal(err)
		}
		if err := g.graphLaunch(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.copyDtoH(host, out); err != nil {
		t.Fatal(err)
	}
	for i, v := range u64s(host) {
		if want := 2 * (sum + 20*uint64(i)); v != want {
			t.Fatalf("out[%d] = %d after 20 replays, want %d", i, v, want)
		}
	}
}

func TestGPUAllocationFailure(t *testing.T) {
	g := testGPU(t)
	free0 := freeMem(t, g)
	_, err := g.alloc(free0 + 1<<30)
	if !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Fatalf("allocating %d bytes with %d free: want ErrOutOfMemory, got %v", free0+1<<30, free0, err)
	}
	free1 := freeMem(t, g)
	// Other processes may move free memory a little; ours must not leak.
	if d := free0 - free1; d > 64<<20 {
		t.Fatalf("free memory dropped by %d bytes after a failed allocation", d)
	}
	t.Logf("failed as wanted: %v", err)
}

func TestGPUChunkedUpload(t *testing.T) {
	g := testGPU(t)
	r := rand.New(rand.NewPCG(5, 6))
	src := make([]byte, 10<<20+12345) // a tail shorter than a chunk
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	dst := must[devptr](t)(g.alloc(int64(len(src))))
	defer g.free(dst)
	for _, chunk := range []int{64 << 10, 1 << 20, 3<<20 + 7, 64 << 20} {
		if err := g.memset(dst, 0, int64(len(src))); err != nil {
			t.Fatal(err)
		}
		var marks []int
		if err := g.upload(dst, src, chunk, 3, func(p int) { marks = append(marks, p) }); err != nil {
			t.Fatal(err)
		}
		back := make([]byte, len(src))
		if err := g.copyDtoH(back, dst); err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(back) != sha256.Sum256(src) {
			i := 0
			for i < len(src) && back[i] == src[i] {
				i++
			}
			t.Fatalf("chunk %d: device copy differs from the source first at byte %d", chunk, i)
		}
		if fmt.Sprint(marks) != "[0 25 50 75 100]" {
			t.Fatalf("chunk %d: progress %v", chunk, marks)
		}
	}
}

// TestGPUToyPlan runs the toy plan end to end: prefill in chunks, decode
// through the captured graph, two interleaved sequences with their own KV
// caches, logits against the float64 reference.
// With SyncEachLaunch the same steps run launch by launch.
func TestGPUToyPlan(t *testing.T) {
	if !gpuTests() {
		t.Skip("set ORC_GPU_TESTS=1 on a GPU host")
	}
	t.Run("graphs", func(t *testing.T) { runToyPlan(t, false) })
	t.Run("sync-each-launch", func(t *testing.T) { runToyPlan(t, true) })
}

func runToyPlan(t *testing.T, syncEach bool) {
	c := toy{vocab: 1000, dim: 32, maxTokens: 8, ctx: 64}
	p := c.write(t)
	var marks []int
	d, err := Open(p, 0, Options{ChunkBytes: 4096, Progress: func(pct int) { marks = append(marks, pct) }, SyncEachLaunch: syncEach})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if fmt.Sprint(marks) != "[0 25 50 75 100]" {
		t.Errorf("progress %v", marks)
	}
	info := d.Info()
	t.Logf("%+v", info)
	if !info.Resident || info.Device != "cuda:0" || info.Vocab != c.vocab || info.ContextLength != c.ctx {
		t.Errorf("info %+v", info)
	}
	if err := d.CheckResidency(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	seqs := make([]runtime.Sequence, 2)
	hist := make([][]int32, 2)
	for i := range seqs {
		if seqs[i], err = d.NewSequence(0); err != nil {
			t.Fatal(err)
		}
		defer seqs[i].Close()
	}
	if used := d.Info().VRAMBytesUsed; used < 2*kvBytes(&p.Manifest.Model, c.ctx) {
		t.Errorf("VRAM used %d does not count two KV caches", used)
	}
	check := func(i int, got []float32) {
		t.Helper()
		want := c.logits(hist[i])
		var num, den float64
		for v := range want {
			num += (float64(got[v]) - want[v]) * (float64(got[v]) - want[v])
			den += want[v] * want[v]
		}
		if rel := math.Sqrt(num / den); !(rel < 1e-5) {
			t.Fatalf("sequence %d at %d tokens: relative error %g", i, len(hist[i]), rel)
		}
	}
	// Prompts of 20 and 3 tokens: three prefill chunks, and one.
	for i, n := range []int{20, 3} {
		prompt := make([]int32, n)
		for k := range prompt {
			prompt[k] = int32(r.IntN(c.vocab))
		}
		hist[i] = append(hist[i], prompt...)
		check(i, must[[]float32](t)(seqs[i].Forward(context.Background(), prompt)))
	}
	for step := range 30 {
		i := step % 2
		tok := []int32{int32(r.IntN(c.vocab))}
		hist[i] = append(hist[i], tok...)
		check(i, must[[]float32](t)(seqs[i].Forward(context.Background(), tok)))
		if seqs[i].Pos() != len(hist[i]) {
			t.Fatalf("Pos %d, want %d", seqs[i].Pos(), len(hist[i]))
		}
	}
	// Replays of the last decode step (sequence 1's) leave the caches as they
	// were; sequence 0's step is no longer in the state block to replay.
	if ok, err := seqs[0].(*sequence).ReplayDecode(2); ok || err != nil {
		t.Fatalf("ReplayDecode of a sequence that did not step last: %v, %v", ok, err)
	}
	if ok, err := seqs[1].(*sequence).ReplayDecode(3); ok == syncEach || err != nil {
		t.Fatalf("ReplayDecode: replayed %v, %v (each launch synchronised: %v)", ok, err, syncEach)
	}
	hist[1] = append(hist[1], 5)
	check(1, must[[]float32](t)(seqs[1].Forward(context.Background(), []int32{5})))
	// A prefill after decode steps continues the same cache.
	more := []int32{1, 2, 3, 4, 5}
	hist[0] = append(hist[0], more...)
	check(0, must[[]float32](t)(seqs[0].Forward(context.Background(), more)))
	_, err = seqs[1].Forward(context.Background(), make([]int32, c.ctx))
	if !errors.Is(err, runtime.ErrContextFull) {
		t.Fatalf("overfull Forward: %v", err)
	}
	if _, err := seqs[1].Forward(context.Background(), []int32{int32(c.vocab)}); err == nil || !strings.Contains(err.Error(), "outside the vocabulary") {
		t.Fatalf("bad token: %v", err)
	}
	// A new sequence reuses the closed one's cache and graph: no new VRAM,
	// and it starts from an empty cache.
	used := d.Info().VRAMBytesUsed
	if err := seqs[0].Close(); err != nil {
		t.Fatal(err)
	}
	if seqs[0], err = d.NewSequence(0); err != nil {
		t.Fatal(err)
	}
	if d.Info().VRAMBytesUsed != used {
		t.Errorf("VRAM %d after reusing a cache, was %d", d.Info().VRAMBytesUsed, used)
	}
	hist[0] = []int32{9, 8, 7}
	check(0, must[[]float32](t)(seqs[0].Forward(context.Background(), hist[0])))
	for range 3 {
		hist[0] = append(hist[0], 11)
		check(0, must[[]float32](t)(seqs[0].Forward(context.Background(), []int32{11})))
	}
	// A shorter sequence fits in a parked cache too, and keeps its own limit.
	if err := seqs[0].Close(); err != nil {
		t.Fatal(err)
	}
	short, err := d.NewSequence(5)
	if err != nil {
		t.Fatal(err)
	}
	defer short.Close()
	if d.Info().VRAMBytesUsed != used {
		t.Errorf("VRAM %d after reusing a larger cache, was %d", d.Info().VRAMBytesUsed, used)
	}
	hist[0] = []int32{4, 5, 6, 7}
	check(0, must[[]float32](t)(short.Forward(context.Background(), hist[0])))
	hist[0] = append(hist[0], 1)
	check(0, must[[]float32](t)(short.Forward(context.Background(), []int32{1})))
	if _, err := short.Forward(context.Background(), []int32{2}); !errors.Is(err, runtime.ErrContextFull) {
		t.Fatalf("a sixth token in a sequence of 5: %v", err)
	}
}

func TestGPUOpenOutOfMemory(t *testing.T) {
	if !gpuTests() {
		t.Skip("set ORC_GPU_TESTS=1 on a GPU host")
	}
	c := toy{vocab: 100, dim: 8, maxTokens: 4, ctx: 16}
	p := c.write(t)
	// More activation memory than any GPU has: the plan's numbers are what
	// Open sizes by, so no big file is needed.
	p.Manifest.Memory.ArenaBytes = 1 << 50
	g := testGPU(t)
	free0 := freeMem(t, g)
	_, err := Open(p, 0, Options{})
	if !errors.Is(err, runtime.ErrOutOfMemory) || !strings.Contains(err.Error(), "needs 1125899") || !strings.Contains(err.Error(), "free") {
		t.Fatalf("want ErrOutOfMemory with required and free bytes, got %v", err)
	}
	free1 := freeMem(t, g)
	if d := free0 - free1; d > 64<<20 {
		t.Fatalf("free memory dropped by %d bytes after a refused Open", d)
	}
	t.Logf("refused as wanted: %v", err)
}

// TestGPULoadChunkSizes measures Open of a plan from page cache
// (ORC_GPU_LOAD_GIB GiB of weights, default 1) for upload chunk sizes and
// buffer counts, with weights.bin hashed before the upload (plans.Open's
// default), beside it (DeferWeightHash) or not at all (ORC_GPU_BENCH=1;
// it prints, asserts nothing about speed).
func TestGPULoadChunkSizes(t *testing.T) {
	if !gpuTests() || os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("set ORC_GPU_TESTS=1 ORC_GPU_BENCH=1 on a GPU host")
	}
	gib := 1
	if v := os.Getenv("ORC_GPU_LOAD_GIB"); v != "" {
		gib, _ = strconv.Atoi(v)
	}
	c := toy{vocab: 1000, dim: 32, maxTokens: 8, ctx: 64, padBytes: int64(gib) << 30}
	dir := c.write(t).Dir
	// Open takes the plan; each load opens it afresh, as a process would.
	load := func(o plans.OpenOptions, chunk, bufs int) *Device {
		t.Helper()
		p, err := plans.Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Open(p, 0, Options{ChunkBytes: chunk, UploadBuffers: bufs})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	measure := func(name string, o plans.OpenOptions, mib, bufs int) {
		var up, open []float64
		var bytes int64
		for range 5 {
			start := time.Now()
			d := load(o, mib<<20, bufs)
			open = append(open, time.Since(start).Seconds())
			up = append(up, d.UploadTime().Seconds())
			bytes = d.reg.weightBytes
			d.Close()
		}
		slices.Sort(up)
		slices.Sort(open)
		u, op := up[len(up)/2], open[len(open)/2]
		t.Logf("%-10s chunk %2d MiB x %d: upload %.1f ms (%.2f GB/s), plans.Open+Open %.1f ms, of %d bytes; medians of 5",
			name, mib, bufs, 1e3*u, float64(bytes)/u/1e9, 1e3*op, bytes)
	}
	// Warm the page cache and the driver once.
	load(plans.OpenOptions{SkipWeightHash: true}, 0, 0).Close()
	for _, mib := range []int{1, 4, 16, 64} {
		for _, bufs := range []int{2, 4, 8} {
			measure("unhashed", plans.OpenOptions{SkipWeightHash: true}, mib, bufs)
		}
	}
	for _, mib := range []int{1, 16} {
		for _, bufs := range []int{2, 4} {
			measure("hashed", plans.OpenOptions{}, mib, bufs)
			measure("beside", plans.OpenOptions{DeferWeightHash: true}, mib, bufs)
		}
	}
}

func TestGPUPlanIntegrity(t *testing.T) {
	// The device copy of the weights equals weights.bin byte for byte.
	if !gpuTests() {
		t.Skip("set ORC_GPU_TESTS=1 on a GPU host")
	}
	p := toy{vocab: 1000, dim: 32, maxTokens: 8, ctx: 64, padBytes: 5<<20 + 3}.write(t)
	want, err := os.ReadFile(filepath.Join(p.Dir, plans.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(p, 0, Options{ChunkBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	back := make([]byte, len(want))
	if err := d.g.copyDtoH(back, d.arena); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, want) {
		t.Fatal("weights on the device differ from weights.bin")
	}
}

// TestGPUDeferredHash: a plan opened with its hash deferred is hashed
// beside the upload; an altered weights.bin fails Open with the span named,
// an intact one loads.
func TestGPUDeferredHash(t *testing.T) {
	if !gpuTests() {
		t.Skip("set ORC_GPU_TESTS=1 on a GPU host")
	}
	dir := toy{vocab: 1000, dim: 32, maxTokens: 8, ctx: 64, padBytes: 130 << 20}.write(t).Dir
	open := func() error {
		p, err := plans.Open(dir, plans.OpenOptions{DeferWeightHash: true})
		if err != nil {
			t.Fatal(err)
		}
		d, err := Open(p, 0, Options{})
		if err != nil {
			p.Close()
			return err
		}
		return d.Close()
	}
	if err := open(); err != nil {
		t.Fatalf("intact plan: %v", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, plans.WeightsFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0xff}, 100<<20)
	f.Close()
	if err := open(); !errors.Is(err, plans.ErrCorrupt) || !strings.Contains(err.Error(), "fail their hash") {
		t.Fatalf("altered plan: got %v, want ErrCorrupt naming the span", err)
	}
}

// TestGPUStepOverhead times decode steps of a toy plan whose kernels do
// almost nothing, with a Qwen2.5-sized vocabulary: the runtime's own cost
// per token (state copy, graph replay, logits back to the host, syncs).
// ORC_GPU_BENCH=1; it prints and asserts nothing about speed.
func TestGPUStepOverhead(t *testing.T) {
	if !gpuTests() || os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("set ORC_GPU_TESTS=1 ORC_GPU_BENCH=1 on a GPU host")
	}
	c := toy{vocab: 151936, dim: 1, maxTokens: 8, ctx: 1024}
	for _, syncEach := range []bool{false, true} {
		d, err := Open(c.write(t), 0, Options{SyncEachLaunch: syncEach})
		if err != nil {
			t.Fatal(err)
		}
		seq, err := d.NewSequence(0)
		if err != nil {
			t.Fatal(err)
		}
		var steps []float64
		for i := range 600 {
			start := time.Now()
			if _, err := seq.Forward(context.Background(), []int32{int32(i % c.vocab)}); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, time.Since(start).Seconds())
		}
		first := steps[0]
		steps = steps[100:]
		slices.Sort(steps)
		t.Logf("sync each launch %v: decode step median %.1f µs, p90 %.1f µs (3 kernels, %d logits back); first step %.2f ms",
			syncEach, 1e6*steps[len(steps)/2], 1e6*steps[len(steps)*9/10], c.vocab, 1e3*first)
		seq.Close()
		d.Close()
	}
}

package cuda

import (
	_ "embed"
	"encoding/binary"
	"math"
	"testing"
	"time"
)

func TestProgrammaticLaunch(t *testing.T) {
	for _, c := range []struct {
		kernelsWait, launchEx bool
		cc                    int
		env                   string
		want                  bool
	}{
		{true, true, 9, "", true},
		{true, true, 10, "1", true},
		{true, true, 9, "0", false}, // turned off by ORC_CUDA_PDL=0
		{true, true, 8, "", false},  // Ampere: cuLaunchKernel
		{true, false, 9, "", false}, // a driver without cuLaunchKernelEx
		{false, true, 9, "", false}, // kernels that do not wait (older plans)
	} {
		if got := programmaticLaunch(c.kernelsWait, c.launchEx, c.cc, c.env); got != c.want {
			t.Errorf("programmaticLaunch(wait %v, launchEx %v, sm_%d0, ORC_CUDA_PDL=%q) = %v, want %v",
				c.kernelsWait, c.launchEx, c.cc, c.env, got, c.want)
		}
	}
}

// chain.ptx is testdata/chain.cu compiled by nvcc: chain_step, which waits
// on the grid before it (sm_90).
//
//go:embed testdata/chain.ptx
var chainPTX []byte

// TestGPUProgrammaticLaunch runs a chain of launches, each reading the
// buffer the one before wrote and writing the one it read, with programmatic
// stream serialization: directly and as a replayed captured graph. It logs
// the chain's time with and without it (what a launch gap costs).
func TestGPUProgrammaticLaunch(t *testing.T) {
	g := testGPU(t)
	if g.d.cc_major < 9 || g.d.launch_ex == 0 {
		t.Skipf("%s has no programmatic dependent launch", g.sm())
	}
	mod := must[module](t)(g.moduleLoad(chainPTX))
	defer g.moduleUnload(mod)
	fn := must[uint64](t)(g.function(mod, "chain_step", 0))
	const n, links = 1 << 20, 64
	bufs := [2]devptr{must[devptr](t)(g.alloc(4 * n)), must[devptr](t)(g.alloc(4 * n))}
	defer g.free(bufs[0])
	defer g.free(bufs[1])
	b := &batch{}
	for i := range links {
		b.launches = append(b.launches, launchRec{fn: fn, grid: [3]uint32{n / 256, 1, 1}, block: [3]uint32{256, 1, 1}, argc: 3})
		b.argv = append(b.argv, uint64(bufs[i%2]), uint64(bufs[(i+1)%2]), n)
	}
	host := make([]byte, 4*n)
	// run zeroes buffer 0, runs the chain reps times through do and checks
	// that buffer 0 holds links·reps everywhere.
	run := func(what string, reps int, do func() error) time.Duration {
		t.Helper()
		if err := g.memset(bufs[0], 0, 4*n); err != nil {
			t.Fatal(err)
		}
		if err := g.sync(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for range reps {
			if err := do(); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.copyDtoH(host, bufs[0]); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		for i := 0; i < n; i++ {
			if v := math.Float32frombits(binary.LittleEndian.Uint32(host[4*i:])); v != float32(links*reps) {
				t.Fatalf("%s: element %d is %v after %d chains of %d launches, want %d", what, i, v, reps, links, links*reps)
			}
		}
		return took
	}
	for _, pdl := range []bool{true, false} {
		g.d.pdl = 0
		if pdl {
			g.d.pdl = 1
		}
		direct := run("direct launches", 10, func() error { return g.launch(b) })
		if err := g.captureBegin(); err != nil {
			t.Fatal(err)
		}
		lerr := g.launch(b)
		x, err := g.captureEnd()
		if lerr != nil || err != nil {
			t.Fatalf("capturing the chain (programmatic %v): %v, %v", pdl, lerr, err)
		}
		replay := run("graph replay", 10, func() error { return g.graphLaunch(x) })
		if err := g.graphDestroy(x); err != nil {
			t.Fatal(err)
		}
		t.Logf("programmatic %v: %d chains of %d launches over %d floats: direct %v, graph %v", pdl, 10, links, n, direct, replay)
	}
}

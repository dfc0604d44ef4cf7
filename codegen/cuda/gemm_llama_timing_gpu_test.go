package cuda_test

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
)

// TestGPUGEMMLlamaTiming times the prefill GEMMs of one Llama-3.1-8B
// Q4_K_M layer at 512 tokens, each alone with its own weights (about 400
// MB: past L2), in the tiles chooseGEMMTiles records: the SwiGLU (4096 →
// 2 × 14336, Q4_K gate and up), the down projection (14336 → 4096) in Q6_K
// and in Q4_K, the o projection (4096 → 4096, Q4_K) and the qkv (4096 →
// 4096 + 1024 + 1024) with a Q6_K v and all Q4_K. It logs µs (runtime/cuda's
// launch profile: each launch alone between two events, about 5 µs of their
// own) and TFLOP/s a launch, checks each product against float64
// (gemmTolerance) and asserts nothing about speed. ORC_GEMM_TILES="64x128,
// 128x64" adds each product again in those whole-K tiles (4 x stages),
// to compare tiles in one run. ORC_GPU_BENCH=1.
func TestGPUGEMMLlamaTiming(t *testing.T) {
	gpuOnly(t)
	if os.Getenv("ORC_GPU_BENCH") != "1" {
		t.Skip("set ORC_GPU=1 ORC_GPU_BENCH=1 on a GPU host")
	}
	const d, f, kv = 4096, 14336, 1024
	forms := []string{""}
	if s := os.Getenv("ORC_GEMM_TILES"); s != "" {
		forms = append(forms, strings.Split(s, ",")...)
	}
	pl := newGEMMTimingPlan("gemm_llama", rand.New(rand.NewPCG(38, 40)))
	g, weight := pl.g, pl.weight
	rw := func(gt gguf.Type, out, in int64) *gemmWeight { return pl.randomWeight(t, gt, out, in) }
	type product struct {
		name, form string
		y          *ir.Node
		flops      float64
		ref        []float64 // [gemmT, cols] of the output (qkv: q, k, v parts in turn)
		cols       []int64   // the output's parts
	}
	var prods []*product
	xd, xf := pl.x(d), pl.x(f)
	tables := pl.tables
	gate, up := rw(gguf.Q4_K, f, d), rw(gguf.Q4_K, f, d)
	gu := [][]float64{gemmRef(tables[d], gate), gemmRef(tables[d], up)}
	swiRef := make([]float64, gemmT*f)
	for i := range swiRef {
		swiRef[i] = gu[0][i] / (1 + math.Exp(-gu[0][i])) * gu[1][i]
	}
	downQ6, downQ4, o := rw(gguf.Q6_K, d, f), rw(gguf.Q4_K, d, f), rw(gguf.Q4_K, d, d)
	downQ6Ref, downQ4Ref, oRef := gemmRef(tables[f], downQ6), gemmRef(tables[f], downQ4), gemmRef(tables[d], o)
	wq, wk, wv, wv4 := rw(gguf.Q4_K, d, d), rw(gguf.Q4_K, kv, d), rw(gguf.Q6_K, kv, d), rw(gguf.Q4_K, kv, d)
	qkvRef := func(v *gemmWeight) []float64 {
		return slices.Concat(gemmRef(tables[d], wq), gemmRef(tables[d], wk), gemmRef(tables[d], v))
	}
	qkvQ6Ref, qkvQ4Ref := qkvRef(wv), qkvRef(wv4)
	for _, form := range forms {
		add := func(name string, y *ir.Node, flops float64, ref []float64, cols ...int64) {
			g.Outputs = append(g.Outputs, y)
			prods = append(prods, &product{name: name, form: form, y: y, flops: flops, ref: ref, cols: cols})
		}
		add("swiglu Q4_K", g.Add(ir.OpSwiGLULinear, ir.F32, ir.Shape{ir.T, f}, nil, xd, weight(gate), weight(up)), 2*gemmT*2*f*d, swiRef, f)
		add("down Q6_K", g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, d}, nil, xf, weight(downQ6)), 2*gemmT*d*f, downQ6Ref, d)
		add("down Q4_K", g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, d}, nil, xf, weight(downQ4)), 2*gemmT*d*f, downQ4Ref, d)
		add("o Q4_K", g.Add(ir.OpLinear, ir.F32, ir.Shape{ir.T, d}, nil, xd, weight(o)), 2*gemmT*d*d, oRef, d)
		for _, v := range []*gemmWeight{wv, wv4} {
			ref := qkvQ6Ref
			if v == wv4 {
				ref = qkvQ4Ref
			}
			y := g.Add(ir.OpQKV, ir.F32, ir.Shape{ir.T, d + 2*kv}, map[string]any{"parts": []int64{d, kv, kv}}, xd, weight(wq), weight(wk), weight(v))
			add("qkv Q4_K+"+v.gt.String(), y, 2*gemmT*(d+2*kv)*d, ref, d, kv, kv)
		}
	}
	after := runGPUPasses(t, g, pl.man)
	for _, p := range prods {
		p.y = after[p.y]
		if p.form == "" {
			continue
		}
		m, n, ok := strings.Cut(p.form, "x")
		tm, err1 := strconv.ParseInt(m, 10, 64)
		tn, err2 := strconv.ParseInt(n, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("ORC_GEMM_TILES: %q is not MxN", p.form)
		}
		p.y.Attrs["gemm_tile_m"], p.y.Attrs["gemm_tile_n"], p.y.Attrs["gemm_splits"] = tm, tn, int64(1)
		if _, ok := p.y.Attrs["gemm_stages"]; ok {
			p.y.Attrs["gemm_stages"] = int64(4)
		}
	}
	got, lo, us, kernelOf := pl.profile(t)
	t.Logf("%-16s %-8s %-9s %9s %8s %9s  %s", "product", "form", "tiles", "µs", "TFLOP/s", "rel_err", "kernel")
	for _, p := range prods {
		off := (p.y.Attrs["offset"].(int64) - lo) / 4
		e, at := 0.0, int64(0)
		for _, c := range p.cols { // a qkv part sits at MAX_TOKENS·(earlier parts' columns)
			e = max(e, relErr64(got[off:off+gemmT*c], p.ref[at:at+gemmT*c]))
			off, at = off+gemmT*c, at+gemmT*c
		}
		if e > gemmTolerance {
			t.Errorf("%s %s: relative error %.2e", p.name, p.form, e)
		}
		kernel, u := kernelOf[p.y.Attrs["offset"].(int64)], us[p.y.Attrs["offset"].(int64)]
		t.Logf("%-16s %-8s %3d×%3d/%-2d %9.1f %8.1f %9.1e  %s", p.name, p.form, p.y.Int("gemm_tile_m"), p.y.Int("gemm_tile_n"), p.y.Int("gemm_splits"),
			u, p.flops/u/1e6, e, kernel)
	}
}

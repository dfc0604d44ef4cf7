package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// gemmTimingPlan is a plan of 512-token prefill products for the GEMM
// timing tests: x inputs embedded from random tables (one a row length),
// each product with its own weights (past L2 together), every output
// read back.
type gemmTimingPlan struct {
	r      *rand.Rand
	g      *ir.Graph
	man    *plans.Manifest
	data   map[string][]byte
	tok    *ir.Node
	tables map[int64][]float32 // by row length: [gemmT, in]
	xs     map[int64]*ir.Node
}

func newGEMMTimingPlan(name string, r *rand.Rand) *gemmTimingPlan {
	g := ir.New()
	g.Attrs["max_tokens"] = int64(gemmT)
	return &gemmTimingPlan{r: r, g: g, data: map[string][]byte{}, tables: map[int64][]float32{}, xs: map[int64]*ir.Node{},
		tok: g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"}),
		man: &plans.Manifest{CompilerVersion: "codegen/cuda test", Target: "sm_90",
			Model:  plans.Model{Name: name, Arch: name, NLayer: 1, ContextLength: 2 * gemmT},
			Memory: plans.Memory{MaxTokens: gemmT}}}
}

// x is the activation [T, in], token t's row the table's row t.
func (p *gemmTimingPlan) x(in int64) *ir.Node {
	if p.xs[in] == nil {
		p.tables[in] = randomTable(p.r, int(in))
		name := fmt.Sprintf("table%d", in)
		p.data[name] = f32Bytes(p.tables[in])
		p.man.Tensors = append(p.man.Tensors, plans.Tensor{Name: name, DType: "f32", Shape: []int64{gemmT, in}, Bytes: 4 * gemmT * in})
		w := p.g.Add(ir.OpWeight, ir.F32, ir.Shape{gemmT, in}, map[string]any{"name": name})
		p.xs[in] = p.g.Add(ir.OpEmbed, ir.F32, ir.Shape{ir.T, in}, nil, w, p.tok)
	}
	return p.xs[in]
}

// randomWeight is a random weight of type gt, gemmTimingSlab distinct rows.
func (p *gemmTimingPlan) randomWeight(t *testing.T, gt gguf.Type, out, in int64) *gemmWeight {
	dt, _ := ir.ParseDType(strings.ToLower(gt.String()))
	return randomWeight(t, p.r, "", gt, dt, out, in, gemmTimingSlab)
}

// weight adds w's bytes as a weight of its own.
func (p *gemmTimingPlan) weight(w *gemmWeight) *ir.Node {
	name := fmt.Sprintf("w%d", len(p.data))
	p.data[name] = w.data
	p.man.Tensors = append(p.man.Tensors, plans.Tensor{Name: name, DType: w.dt.String(), Shape: []int64{w.out, w.in}, Bytes: int64(len(w.data))})
	return p.g.Add(ir.OpWeight, w.dt, ir.Shape{w.out, w.in}, map[string]any{"name": name})
}

// profile writes the plan (after runGPUPasses and edit, the graph's
// outputs as its "logits") and runs 512-token steps under the launch
// profile: the outputs (from lo, the span's start) and each GEMM kernel's
// µs a launch, by the arena offset of the output it writes.
func (p *gemmTimingPlan) profile(t *testing.T) (got []float32, lo int64, us map[int64]float64, kernel map[int64]string) {
	if err := ir.Verify(p.g); err != nil {
		t.Fatal(err)
	}
	p.man.Graph = ir.Print(p.g)
	lo, hi := outputSpan(p.g, gemmT)
	p.man.Model.Vocab = int((hi - lo) / 4)
	kernel = map[int64]string{}
	for _, y := range p.g.Outputs {
		kernel[y.Attrs["offset"].(int64)] = ""
	}
	dir := writeEditedPlan(t, p.g, p.man, func(name string) []byte { return p.data[name] }, func(k *plans.Kernels) {
		k.Logits = lo
		for _, l := range k.Prefill {
			if !strings.HasPrefix(l.Kernel, "gemm_") || strings.HasPrefix(l.Kernel, "gemm_x_f16") {
				continue
			}
			for _, a := range l.Args {
				if _, ok := kernel[a.Offset]; ok && a.Kind == plans.ArgArena {
					kernel[a.Offset] = l.Kernel
				}
			}
		}
	})
	got, byName := profiledSteps(t, dir, 2*gemmT, gemmT)
	us = map[int64]float64{}
	for off, k := range kernel {
		us[off] = byName[k]
	}
	return got, lo, us, kernel
}

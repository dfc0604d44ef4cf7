package cuda_test

import (
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// tinyPresets are the synthetic tiny models whose emitted CUDA is compiled
// and compared with goldens (gpt-oss waits for a moe kernel).
var tinyPresets = []struct {
	preset string
	quant  synth.Quant
}{
	{"llama-tiny", synth.QuantQ4KM},
	{"qwen2.5-0.5b-tiny", synth.QuantQ4KM},
	{"qwen2.5-0.5b-tiny", synth.QuantQ4_0},
	{"phi-3-mini-4k-tiny", synth.QuantQ4KM},
	{"gpt2-small-tiny", synth.QuantF16},
}

const testMaxTokens = 64

// tinyPlan writes a synthetic preset, lowers it, runs the GPU pipeline and
// returns the graph, a manifest with placed weight offsets, and the file.
func tinyPlan(t *testing.T, preset string, q synth.Quant) (*ir.Graph, *plans.Manifest, *gguf.File) {
	t.Helper()
	p, err := synth.Lookup(preset)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := synth.Plan(p, q)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := sm.WriteFile(path, 1); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := arch.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := compiler.Lower(m, testMaxTokens)
	if err != nil {
		t.Fatal(err)
	}
	if err := passes.Run(g, passes.Options{Target: "sm_90", Verify: true}); err != nil {
		t.Fatal(err)
	}
	h := &m.H
	man := &plans.Manifest{Model: plans.Model{Arch: h.Arch, NLayer: h.NLayer, NEmbd: h.NEmbd, NHead: h.NHead,
		NHeadKV: h.NHeadKV, HeadDim: h.HeadDim, Vocab: h.NVocab, ContextLength: h.NCtx}}
	// The weight table in first-read order with offsets placed as
	// plans.Write places them.
	seen := map[string]bool{}
	var off int64
	for _, n := range g.Nodes {
		for _, w := range n.Inputs {
			if w.Op != ir.OpWeight || seen[w.Str("name")] {
				continue
			}
			seen[w.Str("name")] = true
			info, ok := f.Tensor(w.Str("name"))
			if !ok {
				t.Fatalf("weight %s not in the file", w.Str("name"))
			}
			off = (off + plans.Alignment - 1) / plans.Alignment * plans.Alignment
			man.Tensors = append(man.Tensors, plans.Tensor{Name: w.Str("name"), DType: w.DType.String(),
				Shape: w.Shape, Layout: w.Str("layout"), Offset: off, Bytes: int64(info.Bytes())})
			off += int64(info.Bytes())
		}
	}
	return g, man, f
}

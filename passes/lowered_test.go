package passes_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llama-orch/orc/compiler"
	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
)

// kernels counts the nodes that launch work in a step: everything but
// inputs, weights and views.
func kernels(g *ir.Graph) int {
	n := 0
	for _, x := range g.Nodes {
		if x.Op != ir.OpInput && x.Op != ir.OpWeight && x.Op != ir.OpView {
			n++
		}
	}
	return n
}

// opCounts lists how many nodes of each computing op g has, sorted by op.
func opCounts(g *ir.Graph) string {
	counts := map[ir.Op]int{}
	for _, x := range g.Nodes {
		if x.Op != ir.OpInput && x.Op != ir.OpWeight && x.Op != ir.OpView {
			counts[x.Op]++
		}
	}
	var parts []string
	for op := range ir.Ops {
		if counts[op] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", op, counts[op]))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// compileStats lowers m, runs the pipeline for target with verification
// after every pass, and describes the kernel counts and the memory plan.
func compileStats(t *testing.T, m *arch.Model, target string, maxTokens int) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	g, err := compiler.Lower(m, maxTokens)
	if err != nil {
		t.Fatal(err)
	}
	before, beforeOps := kernels(g), opCounts(g)
	if err := passes.Run(g, passes.Options{Target: target, Verify: true}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	after := kernels(g)
	if after >= before {
		t.Errorf("%s: fusion left %d kernels of %d", m.H.Arch, after, before)
	}
	// KV cache at ctx 4096: [n_layer][K, V][ctx][n_head_kv·head_dim] fp16.
	kv := int64(m.H.NLayer) * 2 * 4096 * int64(m.H.NHeadKV*m.H.HeadDim) * 2
	return fmt.Sprintf("%s %s max_tokens=%d: kernels per step %d -> %d, arena_bytes=%d peak_bytes=%d, kv_bytes@4096=%d\n  before: %s\n  after:  %s\n",
		m.H.Arch, target, maxTokens, before, after, g.Attrs["arena_bytes"], g.Attrs["peak_bytes"], kv, beforeOps, opCounts(g)), took
}

// TestLoweredTinyModels runs the pipeline on the lowering of every tiny
// synthetic preset (drawn in memory) and compares the kernel counts and
// the memory plan with a golden.
func TestLoweredTinyModels(t *testing.T) {
	var report strings.Builder
	for _, p := range synth.Presets() {
		if !strings.HasSuffix(p.Name, "-tiny") {
			continue
		}
		sm, err := synth.Plan(&p, p.DefaultQuant)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := sm.Write(&buf, 1); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		m, err := arch.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, target := range []string{"cpu", "sm_90"} {
			s, _ := compileStats(t, m, target, 64)
			report.WriteString(p.Name + ": " + s)
		}
	}
	golden := filepath.Join("testdata", "tiny_models.txt")
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(golden, []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if report.String() != string(want) {
		t.Errorf("%s differs (go test ./passes -update rewrites it):\n%s", golden, report.String())
	}
}

// TestFullSizeModels times lowering plus the whole pipeline on the
// full-size synthetic models, which are too big to draw in CI. Make them
// and run it with:
//
//	orcc synth --preset qwen2.5-0.5b -o DIR/qwen2.5-0.5b.gguf
//	orcc synth --preset phi-3-mini-4k -o DIR/phi-3-mini-4k.gguf
//	ORC_FULL_MODELS=DIR go test ./passes -run FullSize -v
func TestFullSizeModels(t *testing.T) {
	dir := os.Getenv("ORC_FULL_MODELS")
	if dir == "" {
		t.Skip("ORC_FULL_MODELS is not set")
	}
	for _, name := range []string{"qwen2.5-0.5b", "phi-3-mini-4k"} {
		start := time.Now()
		f, err := gguf.Open(filepath.Join(dir, name+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := arch.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range []string{"cpu", "sm_90"} {
			s, took := compileStats(t, m, target, 512)
			t.Logf("%s: %s  open+lower+pipeline %v (pipeline alone excluded the open)", name, s, time.Since(start))
			if took > 10*time.Second {
				t.Errorf("%s %s: lowering and the pipeline took %v, want < 10 s", name, target, took)
			}
			start = time.Now()
		}
		f.Close()
	}
}

package compiler

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
)

const stories = "../../shared/testdata/models/stories260k-f32.gguf"

func loadModel(t *testing.T, path string) *arch.Model {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := arch.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// synthModel writes a preset's synthetic GGUF (seed 1) to a temporary file.
func synthModel(t *testing.T, preset string, q synth.Quant) string {
	t.Helper()
	p, err := synth.Lookup(preset)
	if err != nil {
		t.Fatal(err)
	}
	if q == "" {
		q = p.DefaultQuant
	}
	m, err := synth.Plan(p, q)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), preset+".gguf")
	if err := m.WriteFile(path, 1); err != nil {
		t.Fatal(err)
	}
	return path
}

// census counts a graph's ops and collects facts the tests check.
type census struct {
	ops       map[ir.Op]int
	ropeModes map[string]bool
	windows   []int64   // per attention node, in layer order
	sinks     int       // attention nodes with a sinks input
	yarn      int       // rope nodes with YaRN attrs
	head      string    // the LM head's weight
	bases     []float64 // per rope node, in order
	scaled    int       // rope nodes with freq_scale
	factors   int       // rope nodes with freq_factors
}

func count(g *ir.Graph) census {
	c := census{ops: map[ir.Op]int{}, ropeModes: map[string]bool{}}
	for _, n := range g.Nodes {
		c.ops[n.Op]++
		switch n.Op {
		case ir.OpRoPE:
			c.ropeModes[n.Str("mode")] = true
			if _, ok := n.Attrs["yarn_factor"]; ok {
				c.yarn++
			}
			c.bases = append(c.bases, n.Float("base"))
			if _, ok := n.Attrs["freq_scale"]; ok {
				c.scaled++
			}
			if _, ok := n.Attrs["freq_factors"]; ok {
				c.factors++
			}
		case ir.OpAttention:
			c.windows = append(c.windows, n.Int("window"))
			if len(n.Inputs) == 4 {
				c.sinks++
			}
		}
	}
	out := g.Outputs[0]
	if out.Op == ir.OpLinear {
		c.head = out.Inputs[1].Str("name")
	}
	return c
}

func TestLowerPresets(t *testing.T) {
	cases := []struct {
		preset string
		check  func(t *testing.T, c census)
	}{
		{"llama-tiny", func(t *testing.T, c census) {
			want(t, "normal rope", c.ropeModes["normal"] && len(c.ropeModes) == 1)
			want(t, "4 rope nodes", c.ops[ir.OpRoPE] == 4)
			want(t, "2 swiglu", c.ops[ir.OpSwiGLU] == 2)
			want(t, "own LM head", c.head == "output.weight")
		}},
		{"qwen2.5-0.5b-tiny", func(t *testing.T, c census) {
			want(t, "neox rope", c.ropeModes["neox"] && len(c.ropeModes) == 1)
			want(t, "LM head tied to token_embd", c.head == "token_embd.weight")
			want(t, "q/k/v biases: 6 biased linears", c.ops[ir.OpWeight] == 1+2*12+1)
		}},
		{"phi-3-mini-4k-tiny", func(t *testing.T, c census) {
			want(t, "fused qkv split per layer", c.ops[ir.OpSplit] == 2 && c.ops[ir.OpView] == 6)
			want(t, "neox rope", c.ropeModes["neox"])
			want(t, "window 2047 on every layer", len(c.windows) == 2 && c.windows[0] == 2047 && c.windows[1] == 2047)
		}},
		{"gpt2-small-tiny", func(t *testing.T, c census) {
			want(t, "no rope", c.ops[ir.OpRoPE] == 0)
			want(t, "learned positions: two embeds", c.ops[ir.OpEmbed] == 2)
			want(t, "layernorm 2 per layer + final", c.ops[ir.OpLayerNorm] == 5 && c.ops[ir.OpRMSNorm] == 0)
			want(t, "gelu per layer", c.ops[ir.OpGELU] == 2)
			want(t, "fused qkv split", c.ops[ir.OpSplit] == 2)
		}},
		{"gpt-oss-20b-tiny", func(t *testing.T, c census) {
			want(t, "moe per layer, no dense FFN", c.ops[ir.OpMoE] == 2 && c.ops[ir.OpSwiGLU] == 0)
			want(t, "sinks on every attention", c.sinks == 2)
			want(t, "sliding window on even layers only", len(c.windows) == 2 && c.windows[0] == 128 && c.windows[1] == 0)
			want(t, "YaRN on every rope", c.yarn == 4)
		}},
		{"qwen3-tiny", func(t *testing.T, c census) {
			want(t, "q and k normed per head", c.ops[ir.OpHeadRMSNorm] == 4)
			want(t, "neox rope", c.ropeModes["neox"] && c.ops[ir.OpRoPE] == 4)
			want(t, "no biases: 11 weights a layer", c.ops[ir.OpWeight] == 1+2*11+1)
			want(t, "LM head tied", c.head == "token_embd.weight")
		}},
		{"qwen3-30b-a3b-tiny", func(t *testing.T, c census) {
			want(t, "moe per layer", c.ops[ir.OpMoE] == 2 && c.ops[ir.OpSwiGLU] == 0)
			want(t, "q/k norm", c.ops[ir.OpHeadRMSNorm] == 4)
			want(t, "own LM head", c.head == "output.weight")
		}},
		{"llama-3.2-1b-tiny", func(t *testing.T, c census) {
			want(t, "rope_freqs on every rope", c.factors == 4 && c.scaled == 0)
			want(t, "normal rope", c.ropeModes["normal"] && len(c.ropeModes) == 1)
		}},
		{"smollm3-3b-tiny", func(t *testing.T, c census) {
			want(t, "normal rope on layers 0-2 only (layer 3 is NoPE)", c.ropeModes["normal"] && len(c.ropeModes) == 1 &&
				c.ops[ir.OpRoPE] == 6 && c.ops[ir.OpAttention] == 4)
			want(t, "the file's base, no rope_freqs", c.bases[0] == 5e6 && c.factors == 0)
			want(t, "swiglu per layer", c.ops[ir.OpSwiGLU] == 4)
			want(t, "LM head tied", c.head == "token_embd.weight")
		}},
		{"gemma-3-tiny", func(t *testing.T, c census) {
			want(t, "embeddings scaled", c.ops[ir.OpScale] == 1)
			want(t, "gelu-gated FFN", c.ops[ir.OpGEGLU] == 6 && c.ops[ir.OpSwiGLU] == 0)
			want(t, "4 norms a layer + final", c.ops[ir.OpRMSNorm] == 4*6+1)
			want(t, "q/k norm", c.ops[ir.OpHeadRMSNorm] == 12)
			want(t, "window 8 on 5 of 6 layers", slices.Equal(c.windows, []int64{8, 8, 8, 8, 8, 0}))
			want(t, "local base unscaled on sliding layers, global base scaled ×1/8",
				c.bases[0] == 10000 && c.bases[10] == 1e6 && c.bases[11] == 1e6 && c.scaled == 2)
			want(t, "LM head tied", c.head == "token_embd.weight")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.preset, func(t *testing.T) {
			m := loadModel(t, synthModel(t, tc.preset, ""))
			g, err := Lower(m, 32)
			if err != nil {
				t.Fatal(err)
			}
			if err := ir.Verify(g); err != nil {
				t.Fatal(err)
			}
			tc.check(t, count(g))
			// The whole pipeline accepts the graph for both kinds of target.
			for _, target := range []string{"cpu", "sm_90"} {
				compiled(t, m, target)
			}
		})
	}
}

// compiled is m lowered (steps of up to 32 tokens) and run through the
// whole pipeline for target, verified between passes.
func compiled(t *testing.T, m *arch.Model, target string) *ir.Graph {
	t.Helper()
	g, err := Lower(m, 32)
	if err != nil {
		t.Fatal(err)
	}
	if err := passes.Run(g, passes.Options{Target: target, Verify: true}); err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	return g
}

func want(t *testing.T, what string, ok bool) {
	t.Helper()
	if !ok {
		t.Errorf("want %s", what)
	}
}

// TestLowerRealFiles lowers the real GGUF files: stories260k (v1, all F32)
// and llama-2-tiny-random (v3, F16 weights, the full Llama-2 vocabulary).
func TestLowerRealFiles(t *testing.T) {
	for _, c := range []struct {
		path   string
		layers int
	}{{stories, 5}, {"../../shared/testdata/models/llama-2-tiny-random.gguf", 1}} {
		g, err := Lower(loadModel(t, c.path), 64)
		if err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(g); err != nil {
			t.Fatal(err)
		}
		n := count(g)
		want(t, fmt.Sprintf("%d attention layers in %s", c.layers, c.path), n.ops[ir.OpAttention] == c.layers)
		want(t, "normal rope", n.ropeModes["normal"] && len(n.ropeModes) == 1)
		if err := passes.Run(g, passes.Options{Target: "sm_90", Verify: true}); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
	}
}

func TestLowerErrors(t *testing.T) {
	m := loadModel(t, stories)
	if _, err := Lower(m, 0); err == nil {
		t.Error("max tokens 0 accepted")
	}
	if _, err := Lower(nil, 8); err == nil {
		t.Error("nil model accepted")
	}
	bad := *m
	bad.Weights = struct{}{}
	if _, err := Lower(&bad, 8); err == nil {
		t.Error("unknown weight struct accepted")
	}
}

// What a model computes comes from its architecture's declaration: the
// lowering and the passes name no architecture.
func TestLoweringNamesNoArchitecture(t *testing.T) {
	for _, dir := range []string{".", "../passes"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range arch.Supported() {
				if strings.Contains(string(src), strconv.Quote(name)) {
					t.Errorf("%s names architecture %q", f, name)
				}
			}
			for _, typ := range []string{"arch.Llama", "arch.Qwen", "arch.Phi3", "arch.GPT", "arch.Gemma"} {
				if strings.Contains(string(src), typ) {
					t.Errorf("%s names weight struct %s", f, typ)
				}
			}
		}
	}
}

// A declared RoPE layer pattern reaches the graph: layers it leaves out
// attend without rotation, and on both targets their q, k and v still fuse
// into one qkv, which keeps no rotation, while the other layers' qkv
// rotates in its epilogue.
func TestLowerRopeLayers(t *testing.T) {
	m := loadModel(t, synthModel(t, "llama-tiny", ""))
	a := *m.Arch
	a.Compute.RopeLayers = func(layer int) bool { return layer != 1 }
	m.Arch = &a
	g, err := Lower(m, 32)
	if err != nil {
		t.Fatal(err)
	}
	c := count(g)
	want(t, "ropes on layer 0 only", c.ops[ir.OpRoPE] == 2 && c.ops[ir.OpAttention] == 2)
	for _, target := range []string{"cpu", "sm_90"} {
		g := compiled(t, m, target)
		var rotated []bool
		for _, n := range g.Nodes {
			switch n.Op {
			case ir.OpQKV:
				rotated = append(rotated, n.Attrs["rope_mode"] != nil)
			case ir.OpRoPE:
				t.Errorf("%s: a rope is left unfolded: %s", target, n)
			}
		}
		want(t, target+": qkv of layer 0 rotates, of layer 1 not", slices.Equal(rotated, []bool{true, false}))
	}
}

package cuda_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// Bad graphs and tables get an error naming the problem.
func TestGenerateRefuses(t *testing.T) {
	g0, man0, _ := tinyPlan(t, "llama-tiny", synth.QuantQ4KM)
	cases := []struct {
		name   string
		mutate func(g *ir.Graph, m *plans.Manifest)
		want   string
	}{
		{"no max_tokens", func(g *ir.Graph, m *plans.Manifest) { delete(g.Attrs, "max_tokens") }, "max_tokens"},
		{"no memory plan", func(g *ir.Graph, m *plans.Manifest) { delete(g.Attrs, "arena_bytes") }, "planMemory"},
		{"missing weight", func(g *ir.Graph, m *plans.Manifest) { m.Tensors = m.Tensors[1:] }, "not in the plan's tensor table"},
		{"dtype mismatch", func(g *ir.Graph, m *plans.Manifest) { m.Tensors[0].DType = "f32" }, "in the tensor table"},
		{"misaligned weight", func(g *ir.Graph, m *plans.Manifest) { m.Tensors[1].Offset++ }, "aligned"},
		{"unknown layout", func(g *ir.Graph, m *plans.Manifest) { m.Tensors[1].Layout = "tiles" }, "layout \"tiles\""},
		{"bad rope mode", func(g *ir.Graph, m *plans.Manifest) {
			for _, n := range g.Nodes {
				if n.Op == ir.OpQKV {
					n.Attrs["rope_mode"] = "spiral"
				}
			}
		}, "spiral"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, man := cloneGraph(t, g0), *man0
			man.Tensors = append([]plans.Tensor(nil), man0.Tensors...)
			tc.mutate(g, &man)
			_, err := cuda.Generate(g, &man, cuda.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A mixture of experts whose routing or expert tensors do not fit its
// attributes is refused with the reason.
func TestGenerateRefusesMoE(t *testing.T) {
	g0, man, _ := tinyPlan(t, "gpt-oss-20b-tiny", synth.QuantMXFP4)
	cases := []struct {
		name   string
		mutate func(n *ir.Node)
		want   string
	}{
		{"top_k above experts", func(n *ir.Node) { n.Attrs["top_k"] = n.Int("experts") + 1 }, "top_k"},
		{"experts differ from the router", func(n *ir.Node) { n.Attrs["experts"] = n.Int("experts") * 2 }, "router"},
		{"down expert shape", func(n *ir.Node) { n.Inputs[7].Shape = n.Inputs[3].Shape }, "expert weight"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := cloneGraph(t, g0)
			for _, n := range g.Nodes {
				if n.Op == ir.OpMoE {
					tc.mutate(n)
				}
			}
			_, err := cuda.Generate(g, man, cuda.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// cloneGraph round-trips g through the IR text form, so cases can break
// their own copy.
func cloneGraph(t *testing.T, g *ir.Graph) *ir.Graph {
	t.Helper()
	c, err := ir.Parse(ir.Print(g))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNoNVCC(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CUDA_HOME", t.TempDir())
	_, err := cuda.FindNVCC()
	if err != nil && !errors.Is(err, cuda.ErrNoNVCC) {
		t.Fatalf("error %v, want ErrNoNVCC", err)
	}
	if err == nil {
		t.Skip("an nvcc under /usr/local/cuda is found without PATH")
	}
	if !strings.Contains(err.Error(), "nvidia-cuda-toolkit") {
		t.Errorf("the error does not say how to install nvcc: %v", err)
	}
	if _, err := cuda.Compile("", "sm_90"); !errors.Is(err, cuda.ErrNoNVCC) {
		t.Errorf("Compile without nvcc: %v", err)
	}
}

func TestCompileRefusesArch(t *testing.T) {
	if _, err := cuda.Compile("", "hopper"); err == nil || !strings.Contains(err.Error(), "hopper") {
		t.Errorf("error %v, want one naming the arch", err)
	}
}

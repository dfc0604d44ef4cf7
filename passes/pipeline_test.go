package passes

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

func TestPipelineOrder(t *testing.T) {
	index := map[string]int{}
	for i, p := range Pipeline {
		if _, dup := index[p.Name]; dup {
			t.Errorf("pass %s listed twice", p.Name)
		}
		index[p.Name] = i
		if p.Fn == nil {
			t.Errorf("pass %s has no function", p.Name)
		}
		if want := strings.HasPrefix(p.Name, "layout") || strings.HasPrefix(p.Name, "choose"); (p.Targets == GPUTargets) != want {
			t.Errorf("pass %s: GPU-only is %v, want %v", p.Name, p.Targets == GPUTargets, want)
		}
	}
	for _, c := range constraints {
		b, okB := index[c.before]
		a, okA := index[c.after]
		if !okB || !okA {
			t.Errorf("constraint {%s, %s} names a pass not in the pipeline", c.before, c.after)
			continue
		}
		if b >= a {
			t.Errorf("pass %s must run before %s", c.before, c.after)
		}
	}
	if Pipeline[0].Name != "verify" || Pipeline[len(Pipeline)-1].Name != "verifyFinal" {
		t.Errorf("the pipeline must start with verify and end with verifyFinal")
	}
	if got := strings.Join(Names(), ","); !strings.HasPrefix(got, "verify,") {
		t.Errorf("Names() = %s", got)
	}
}

func TestAlignmentMatchesPlans(t *testing.T) {
	if Alignment != plans.Alignment {
		t.Fatalf("passes.Alignment %d ≠ plans.Alignment %d", Alignment, plans.Alignment)
	}
}

func TestRunOptionErrors(t *testing.T) {
	var buf bytes.Buffer
	cases := []struct {
		o    Options
		want string
	}{
		{Options{Target: "tpu"}, `unknown target "tpu"`},
		{Options{Target: "sm_75"}, `unknown CUDA target "sm_75" (targets: sm_80, sm_90)`},
		{Options{Target: "cpu", DumpAfter: "fuseEverything", Dump: &buf}, `"fuseEverything" is not a pass`},
		{Options{Target: "cpu", DumpAfter: "layoutQ4K", Dump: &buf}, "runs only for GPU targets"},
		{Options{Target: "cpu", DumpAfter: "fuseQKV"}, "nowhere to print"},
	}
	for _, c := range cases {
		g := parseFile(t, "testdata/verify.before.ir")
		if err := Run(g, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run(%+v) = %v, want an error containing %q", c.o, err, c.want)
		}
	}
	bad := parseFile(t, "testdata/verify.before.ir")
	delete(bad.Attrs, "max_tokens")
	if err := Run(bad, Options{Target: "cpu"}); err == nil || !strings.Contains(err.Error(), "pass verify: graph: attr max_tokens") {
		t.Errorf("Run on a graph without max_tokens = %v", err)
	}
}

// TestRunPipeline runs the whole pipeline on a two-layer qwen2-style
// graph for the CPU and a GPU target, verifying after every pass, and
// checks the dump-after hook and the result against goldens.
func TestRunPipeline(t *testing.T) {
	for _, target := range []string{"cpu", "sm_90"} {
		g := parseFile(t, "testdata/pipeline.before.ir")
		var dump bytes.Buffer
		if err := Run(g, Options{Target: target, Verify: true, DumpAfter: "fuseQKV", Dump: &dump}); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		if !strings.HasPrefix(dump.String(), "# after fuseQKV\ngraph {") || !strings.Contains(dump.String(), " = qkv(") {
			t.Errorf("%s: dump after fuseQKV:\n%s", target, dump.String())
		}
		if strings.Contains(dump.String(), "offset=") {
			t.Errorf("%s: the dump after fuseQKV shows planned offsets: it was taken late", target)
		}
		checkGolden(t, "pipeline."+target+".after.ir", ir.Print(g))
	}
}

// TestDumpKernelChoices: --dump-after=chooseKernels shows each matrix
// node's kernel in both schedules.
func TestDumpKernelChoices(t *testing.T) {
	var buf bytes.Buffer
	g := parseFile(t, "testdata/pipeline.before.ir")
	if err := Run(g, Options{Target: "sm_90", DumpAfter: "chooseKernels", Dump: &buf}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, `# after chooseKernels`) || strings.Count(out, `kernel="q8" `) < 6 || strings.Count(out, `prefill_kernel="gemm"`) < 6 {
		t.Errorf("dump after chooseKernels lacks the kernel choices:\n%s", out)
	}
}

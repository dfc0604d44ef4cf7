package cuda_test

import (
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/ir"
)

// quantizeLaunches counts a decode schedule's quantize_x8 launches.
func quantizeLaunches(out *cuda.Output) int {
	n := 0
	for _, l := range out.Kernels.Decode {
		if strings.HasPrefix(l.Kernel, "quantize_x8") {
			n++
		}
	}
	return n
}

// stagedLinears are g's q8 linears that the chooseStaging pass recorded as
// quantizing their own input in decode (stages_x).
func stagedLinears(t *testing.T, g *ir.Graph) []*ir.Node {
	t.Helper()
	var staged []*ir.Node
	for _, n := range g.Nodes {
		if n.Bool("stages_x") {
			staged = append(staged, n)
		}
	}
	if len(staged) == 0 {
		t.Fatal("no linear stages its input in decode")
	}
	return staged
}

// dropLateStart deletes n's starts_late and the launch_at_end of the node
// before n that lets it start (chooseLateStarts).
func dropLateStart(g *ir.Graph, n *ir.Node) {
	var atEnd *ir.Node
	for _, m := range g.Nodes {
		if m == n {
			break
		}
		if m.Bool("launch_at_end") {
			atEnd = m
		}
	}
	if atEnd != nil && n.Bool("starts_late") {
		delete(atEnd.Attrs, "launch_at_end")
	}
	delete(n.Attrs, "starts_late")
}

// TestStagingFollowsRecord: codegen stages a linear's input exactly where
// the chooseStaging pass recorded it: without the records each staged
// linear takes a quantize_x8 launch instead.
func TestStagingFollowsRecord(t *testing.T) {
	g, man, _ := tinyPlan(t, "gpt2-small-tiny", synth.QuantQ4KM)
	staged := stagedLinears(t, g)
	before := quantizeLaunches(generate(t, g, man, ""))
	for _, n := range staged {
		delete(n.Attrs, "stages_x")
		dropLateStart(g, n)
	}
	if got := quantizeLaunches(generate(t, g, man, "")); got != before+len(staged) {
		t.Errorf("%d quantize_x8 launches without the %d stages_x records, want %d", got, len(staged), before+len(staged))
	}
}

// TestStagingRefusesHeldCodes: a stages_x record on a linear whose input's
// codes the scratch holds (its producer wrote them) is refused.
func TestStagingRefusesHeldCodes(t *testing.T) {
	g, man, _ := tinyPlan(t, "qwen2.5-0.5b-tiny", synth.QuantQ4KM)
	var l *ir.Node
	for _, n := range g.Nodes {
		if n.Op == ir.OpLinear && n.Str("kernel") == ir.KernelQ8 && n.Inputs[0].Bool("writes_codes") && !n.Bool("stages_x") {
			l = n
			break
		}
	}
	if l == nil {
		t.Fatal("no q8 linear reads codes its producer writes")
	}
	l.Attrs["stages_x"] = true
	_, err := cuda.Generate(g, man, cuda.Options{})
	if err == nil || !strings.Contains(err.Error(), "stages_x recorded") {
		t.Fatalf("Generate with stages_x on a linear whose codes are held: %v, want a refusal", err)
	}
}

// TestStagingNewValueAtHeldOffset: the scratch holds a value's codes, not
// an offset's: a staged linear whose input the memory plan puts where the
// value whose codes the scratch holds was (GPT-2's GELU at its FFN norm's
// row) still stages it, rather than reading the norm's codes as its own.
func TestStagingNewValueAtHeldOffset(t *testing.T) {
	g, man, _ := tinyPlan(t, "gpt2-small-tiny", synth.QuantQ4KM)
	l := stagedLinears(t, g)[0]
	act := l.Inputs[0]
	if act.Op != ir.OpGELU || act.Inputs[0].Op != ir.OpLinear {
		t.Fatalf("staged linear %d reads a %s, want a gelu of a linear", l.ID, act.Op)
	}
	normed := act.Inputs[0].Inputs[0] // whose codes the fc's kernel read
	before := quantizeLaunches(generate(t, g, man, ""))
	act.Attrs["offset"] = normed.Attrs["offset"]
	if got := quantizeLaunches(generate(t, g, man, "")); got != before {
		t.Errorf("%d quantize_x8 launches with the GELU at its norm's offset, want %d", got, before)
	}
}

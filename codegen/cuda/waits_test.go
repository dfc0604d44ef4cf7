package cuda_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// TestEveryKernelWaits checks, in every tiny preset's source, that each
// kernel reaches grid_dep_wait in exactly one place: its wrapper, or the
// device function the wrapper calls (through the device functions that one
// calls). A kernel reaching it nowhere would race with the grid before it;
// one reaching it in both would wait before fetching weights early.
func TestEveryKernelWaits(t *testing.T) {
	for _, tp := range tinyPresets {
		out, _ := tinyOutput(t, tp.preset, tp.quant)
		kernelsWait(t, tp.preset+"-"+string(tp.quant), out.Source)
	}
}

// kernelsWait checks that each kernel of source reaches grid_dep_wait in
// exactly one place: its wrapper or its device function.
func kernelsWait(t *testing.T, name, source string) {
	t.Helper()
	bodies := deviceBodies(source)
	kernels := wrapperRE.FindAllStringSubmatch(source, -1)
	if n := strings.Count(source, "__global__"); len(kernels) != n || n == 0 {
		t.Fatalf("%s: %d kernel wrappers matched of %d", name, len(kernels), n)
	}
	for _, k := range kernels {
		kernel, body, fn := k[1], k[2], k[3]
		inWrapper := strings.Contains(body, "grid_dep_wait();")
		inside := reaches(fn, "grid_dep_wait", bodies, map[string]bool{})
		if inWrapper == inside {
			t.Errorf("%s: kernel %s waits in its wrapper: %v, in %s: %v; want exactly one", name, kernel, inWrapper, fn, inside)
		}
	}
}

// wrapperRE matches a kernel wrapper (templates/wrappers.cu.tmpl): its name,
// its body, and the device function its last statement calls.
var wrapperRE = regexp.MustCompile(`(?s)extern "C" __global__ void __launch_bounds__\([\d, ]+\) (?:CLUSTER_X\(\d+\) )?(\w+)\([^{]*\) \{(.*?\n    (\w+)<[^\n]*)\n\}\n`)

var deviceRE = regexp.MustCompile(`__device__ __forceinline__ [^;{}()]*?\b(\w+)\(`)

// deviceBodies maps each device function's name to its bodies (overloads
// and member functions of one name together).
func deviceBodies(src string) map[string]string {
	bodies := map[string]string{}
	for _, m := range deviceRE.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		i := matching(src, m[1]-1, '(', ')')
		if i < 0 {
			continue
		}
		j := i + 1
		for j < len(src) && (src[j] == ' ' || src[j] == '\n') {
			j++
		}
		if j >= len(src) || src[j] != '{' {
			continue // a declaration
		}
		if end := matching(src, j, '{', '}'); end > 0 {
			bodies[name] += src[j : end+1]
		}
	}
	return bodies
}

// matching is the index of the bracket closing the one at src[i], or -1.
func matching(src string, i int, open, close byte) int {
	depth := 0
	for ; i < len(src); i++ {
		switch src[i] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

var callRE = regexp.MustCompile(`\b(\w+)\s*[<(]`)

// reaches reports whether device function fn is target or calls a device
// function that reaches it.
func reaches(fn, target string, bodies map[string]string, seen map[string]bool) bool {
	if fn == target {
		return true
	}
	if seen[fn] {
		return false
	}
	seen[fn] = true
	for _, c := range callRE.FindAllStringSubmatch(bodies[fn], -1) {
		if _, ok := bodies[c[1]]; ok && reaches(c[1], target, bodies, seen) {
			return true
		}
	}
	return false
}

// TestMoEDownPicksEarly checks that gpt-oss's decode schedule lets every
// moe_down_sum_q8 pick its experts before its wait (PICK_EARLY, recorded
// by chooseEarlyPicks, proven by readsBeforeWait): the grids between the router logits' writer and it
// wait in their wrappers, so the logits are written when it starts, and
// its experts' weight groups are fetched while gate+up finishes.
func TestMoEDownPicksEarly(t *testing.T) {
	out, _ := tinyOutput(t, "gpt-oss-20b-tiny", synth.QuantMXFP4)
	downs := 0
	for i, l := range out.Kernels.Decode {
		if !strings.HasPrefix(l.Kernel, "moe_down_sum_q8") {
			continue
		}
		downs++
		if !strings.Contains(l.Kernel, "_true_") { // PICK_EARLY, then the rows a warp
			t.Errorf("decode launch %d, %s, picks its experts after its wait", i, l.Kernel)
		}
	}
	if downs == 0 {
		t.Fatal("no moe_down_sum_q8 in the decode schedule")
	}
}

// TestMoEDownPicksAsRecorded: the down picks early where the
// chooseEarlyPicks pass recorded pick_early, and only there: without the
// record it picks after its wait; a record on a target without dependent
// launch is refused.
func TestMoEDownPicksAsRecorded(t *testing.T) {
	g, man, _ := tinyPlan(t, "gpt-oss-20b-tiny", synth.QuantMXFP4)
	var moes []*ir.Node
	for _, n := range g.Nodes {
		if n.Bool("pick_early") {
			moes = append(moes, n)
			delete(n.Attrs, "pick_early")
		}
	}
	if len(moes) == 0 {
		t.Fatal("no MoE records pick_early")
	}
	for i, l := range generate(t, g, man, "").Kernels.Decode {
		if strings.HasPrefix(l.Kernel, "moe_down_sum_q8") && strings.Contains(l.Kernel, "_true_") {
			t.Errorf("decode launch %d, %s, picks early without a record", i, l.Kernel)
		}
	}
	g80, man80, _ := lowerFor(t, writeTiny(t, "gpt-oss-20b-tiny", synth.QuantMXFP4), testMaxTokens, "sm_80")
	for _, n := range g80.Nodes {
		if n.Op == ir.OpMoE && n.Str("kernel") == ir.KernelQ8 {
			n.Attrs["pick_early"] = true
		}
	}
	if _, err := cuda.Generate(g80, man80, cuda.Options{Arch: "sm_80"}); err == nil || !strings.Contains(err.Error(), "pick_early recorded for sm_80") {
		t.Errorf("pick_early on an sm_80 plan: %v, want a refusal", err)
	}
}

// TestLateStartsAsRecorded: the launches that the chooseLateStarts pass
// records launch at their end, and only those: a launch_at_end node's last
// launch, the quantize_x8 of a quantize_at_end node; a late start whose
// launch before is not recorded so is refused, and without the records no
// launch is at its end.
func TestLateStartsAsRecorded(t *testing.T) {
	g, man, _ := tinyPlan(t, "phi-3-mini-4k-tiny", synth.QuantQ4KM)
	atEnd := func() []string {
		var fns []string
		for _, l := range generate(t, g, man, "").Kernels.Decode {
			if strings.HasSuffix(l.Kernel, "_at_end") {
				fns = append(fns, strings.SplitN(l.Kernel, "_W_", 2)[0])
			}
		}
		return fns
	}
	var qkv, embed *ir.Node
	for _, n := range g.Nodes {
		if n.Op == ir.OpEmbed && n.Bool("launch_at_end") {
			embed = n
		}
		if n.Op == ir.OpQKV && qkv == nil {
			qkv = n
		}
	}
	if got := strings.Join(atEnd(), " "); embed == nil || got != "embed_rows linear_q8" {
		t.Fatalf("decode launches at their end: %s, want the embed's and the down's (launch_at_end)", got)
	}
	// The first qkv quantizes its input itself: its norm launches and writes
	// no codes; its quantize_x8 lets it start.
	norm := qkv.Inputs[0]
	delete(qkv.Attrs, "fold_norm")
	delete(norm.Attrs, "writes_codes")
	delete(embed.Attrs, "launch_at_end")
	if _, err := cuda.Generate(g, man, cuda.Options{}); err == nil || !strings.Contains(err.Error(), "starts late, but launch 2 before it (quantize_x8") {
		t.Errorf("the quantize_x8 before a late qkv not recorded: %v, want a refusal", err)
	}
	qkv.Attrs["quantize_at_end"] = true
	if got := strings.Join(atEnd(), " "); got != "quantize_x8_0_256_at_end linear_q8" {
		t.Errorf("with quantize_at_end, decode launches at their end: %s, want the qkv's quantize_x8 and the down", got)
	}
	for _, n := range g.Nodes {
		for _, k := range []string{"starts_late", "launch_at_end", "quantize_at_end", "residual_before_wait"} {
			delete(n.Attrs, k)
		}
	}
	if got := atEnd(); len(got) != 0 {
		t.Errorf("decode launches at their end without a record: %v", got)
	}
}

// TestEveryKernelLaunched checks, in every tiny preset's source, that each
// kernel is launched by the prefill, decode or batched schedules or the sampler: the
// variants that the decode schedule's rewrites replaced are not emitted.
func TestEveryKernelLaunched(t *testing.T) {
	for _, tp := range tinyPresets {
		out, _ := tinyOutput(t, tp.preset, tp.quant)
		k := out.Kernels
		launched := map[string]bool{k.Sampler.Draw.Kernel: true}
		for _, ls := range [][]plans.Launch{k.Prefill, k.Decode, k.Batch, k.BatchDecode, k.BatchFew, k.BatchRows} {
			for _, l := range ls {
				launched[l.Kernel] = true
			}
		}
		for _, w := range wrapperRE.FindAllStringSubmatch(out.Source, -1) {
			if !launched[w[1]] {
				t.Errorf("%s-%s: kernel %s is emitted and never launched", tp.preset, tp.quant, w[1])
			}
		}
	}
}

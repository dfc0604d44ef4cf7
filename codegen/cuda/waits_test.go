package cuda_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler/synth"
)

// TestEveryKernelWaits checks, in every tiny preset's source, that each
// kernel reaches grid_dep_wait in exactly one place: its wrapper, or the
// device function the wrapper calls (through the device functions that one
// calls). A kernel reaching it nowhere would race with the grid before it;
// one reaching it in both would wait before fetching weights early.
func TestEveryKernelWaits(t *testing.T) {
	for _, tp := range tinyPresets {
		name := tp.preset + "-" + string(tp.quant)
		out, _ := tinyOutput(t, tp.preset, tp.quant)
		bodies := deviceBodies(out.Source)
		kernels := wrapperRE.FindAllStringSubmatch(out.Source, -1)
		if n := strings.Count(out.Source, "__global__"); len(kernels) != n || n == 0 {
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
}

// wrapperRE matches a kernel wrapper (templates/wrappers.cu.tmpl): its name,
// its body, and the device function its last statement calls.
var wrapperRE = regexp.MustCompile(`(?s)extern "C" __global__ void __launch_bounds__\([\d, ]+\) (\w+)\([^{]*\) \{(.*?\n    (\w+)<[^\n]*)\n\}\n`)

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

// TestMoEDownPicksAfterLogits checks the decode schedule that lets
// moe_down_sum_q8 read the router logits before its wait (moe.cu.tmpl): every
// grid between the one writing them (moe_logits or rmsnorm_logits) and it
// waits in its wrapper, before it lets the next grid launch, so the logits
// are written once moe_down_sum_q8 runs.
func TestMoEDownPicksAfterLogits(t *testing.T) {
	out, _ := tinyOutput(t, "gpt-oss-20b-tiny", synth.QuantMXFP4)
	waitsInWrapper := map[string]bool{}
	for _, k := range wrapperRE.FindAllStringSubmatch(out.Source, -1) {
		waitsInWrapper[k[1]] = strings.Contains(k[2], "grid_dep_wait();")
	}
	downs := 0
	for i, l := range out.Kernels.Decode {
		if !strings.HasPrefix(l.Kernel, "moe_down_sum_q8") {
			continue
		}
		downs++
		j := i - 1
		for ; j >= 0 && !writesLogits(out.Kernels.Decode[j].Kernel); j-- {
			if k := out.Kernels.Decode[j].Kernel; !waitsInWrapper[k] {
				t.Errorf("decode launch %d, %s, between the router logits and moe_down_sum_q8 (launch %d), does not wait in its wrapper", j, k, i)
			}
		}
		if j < 0 {
			t.Errorf("decode launch %d, %s, has no router logits before it", i, l.Kernel)
		}
	}
	if downs == 0 {
		t.Fatal("no moe_down_sum_q8 in the decode schedule")
	}
}

// writesLogits reports whether a decode launch of kernel writes the MoE's
// router logits.
func writesLogits(kernel string) bool {
	return strings.HasPrefix(kernel, "moe_logits") || strings.HasPrefix(kernel, "rmsnorm_logits")
}

// Package passes is the compiler's pass pipeline: one ordered table of
// graph-to-graph passes, like Go's cmd/compile/internal/ssa/compile.go.
// Each pass is a func(*ir.Graph) error in its own file, named by a verb.
package passes

import (
	"fmt"
	"io"
	"strings"

	"github.com/llama-orch/orc/ir"
)

// Targets says for which compile targets a pass runs.
type Targets uint8

const (
	AllTargets Targets = iota // every target
	GPUTargets                // CUDA targets ("sm_90", ...) only
)

// Pass is one row of the pipeline.
type Pass struct {
	Name    string
	Fn      func(*ir.Graph) error
	Targets Targets
}

// Pipeline is the order passes run in. Constraints below say which orders
// matter and why; TestPipelineOrder checks them. The GPU passes from
// chooseKernels on decide what codegen/cuda emits and record it on the
// nodes, down to how decode grids overlap (chooseLateStarts,
// chooseEarlyPicks, chooseEarlyResiduals): codegen prints the records and
// refuses one its schedule contradicts.
var Pipeline = []Pass{
	{"verify", verify, AllTargets},
	{"eliminateCommon", eliminateCommon, AllTargets},
	{"fuseQKV", fuseQKV, AllTargets},
	{"foldRoPE", foldRoPE, AllTargets},
	{"fuseGateUp", fuseGateUp, AllTargets},
	{"fuseResidualNorm", fuseResidualNorm, AllTargets},
	{"fusePostNorms", fusePostNorms, AllTargets},
	{"eliminateDead", eliminateDead, AllTargets},
	{"layoutQ4_0", layoutQ4_0, GPUTargets},
	{"layoutQ5_0", layoutQ5_0, GPUTargets},
	{"layoutQ8_0", layoutQ8_0, GPUTargets},
	{"layoutQ4K", layoutQ4K, GPUTargets},
	{"layoutQ5K", layoutQ5K, GPUTargets},
	{"layoutQ6K", layoutQ6K, GPUTargets},
	{"layoutMXFP4", layoutMXFP4, GPUTargets},
	{"chooseKernels", chooseKernels, GPUTargets},
	{"chooseDecodeAttention", chooseDecodeAttention, GPUTargets},
	{"choosePagedAttention", choosePagedAttention, GPUTargets},
	{"chooseQKNormFolds", chooseQKNormFolds, GPUTargets},
	{"choosePrefillSplits", choosePrefillSplits, GPUTargets},
	{"chooseMoETiles", chooseMoETiles, GPUTargets},
	{"chooseGEMMTiles", chooseGEMMTiles, GPUTargets},
	{"schedule", schedule, AllTargets},
	{"planMemory", planMemory, AllTargets},
	{"chooseCodes", chooseCodes, GPUTargets},
	{"chooseStaging", chooseStaging, GPUTargets},
	{"chooseEarlyPicks", chooseEarlyPicks, GPUTargets},
	{"chooseLateStarts", chooseLateStarts, GPUTargets},
	{"chooseEarlyResiduals", chooseEarlyResiduals, GPUTargets},
	{"verifyFinal", verifyFinal, AllTargets},
}

// constraint says pass before must run before pass after.
type constraint struct{ before, after string }

// layoutPasses are the GPU weight-layout passes, one per weight family.
var layoutPasses = []string{"layoutQ4_0", "layoutQ5_0", "layoutQ8_0", "layoutQ4K", "layoutQ5K", "layoutQ6K", "layoutMXFP4"}

// constraints are the orderings that matter.
var constraints = func() []constraint {
	c := []constraint{
		// Lowering's graph is checked before anything trusts it.
		{"verify", "eliminateCommon"},
		// Merged duplicate weights and views let the fusions see that
		// three linears read one input.
		{"eliminateCommon", "fuseQKV"},
		// foldRoPE rewrites qkv nodes, which fuseQKV makes.
		{"fuseQKV", "foldRoPE"},
		// The fusions orphan nodes (the unfused linears' leftovers).
		{"foldRoPE", "eliminateDead"},
		{"fuseGateUp", "eliminateDead"},
		{"fuseResidualNorm", "eliminateDead"},
		// fusePostNorms extends the add_rmsnorm nodes fuseResidualNorm
		// makes, and orphans nothing itself but is cleaned after likewise.
		{"fuseResidualNorm", "fusePostNorms"},
		{"fusePostNorms", "eliminateDead"},
		// Offsets follow the final order and the final node set.
		{"eliminateDead", "schedule"},
		{"schedule", "planMemory"},
		{"planMemory", "verifyFinal"},
	}
	for _, l := range layoutPasses {
		// A weight's layout is chosen by the fused kernel that reads it,
		// and the kernels a node may take depend on its weights' layouts.
		c = append(c, constraint{"fuseQKV", l}, constraint{"fuseGateUp", l}, constraint{"eliminateDead", l},
			constraint{l, "schedule"}, constraint{l, "chooseKernels"})
	}
	// The kernels are chosen for the final node set, and planMemory keeps
	// the buffers their choices read alive.
	c = append(c, constraint{"eliminateDead", "chooseKernels"}, constraint{"fuseResidualNorm", "chooseKernels"},
		constraint{"fusePostNorms", "chooseKernels"},
		constraint{"chooseKernels", "planMemory"},
		// The codes' producers follow the kernels that read codes, and a
		// last row is its input in place only where offsets allow.
		constraint{"chooseKernels", "chooseCodes"}, constraint{"planMemory", "chooseCodes"},
		constraint{"chooseCodes", "verifyFinal"},
		// A linear stages x where the scratch does not hold x's codes,
		// which the codes' producers and the offsets say.
		constraint{"chooseCodes", "chooseStaging"}, constraint{"chooseStaging", "verifyFinal"},
		// The decode attentions' geometry is checked with the planned graph.
		constraint{"chooseDecodeAttention", "verifyFinal"}, constraint{"choosePagedAttention", "verifyFinal"},
		// An attention folds its q/k norms in decode where it has a decode
		// geometry; planMemory keeps the raw parts it then reads alive, and
		// the overlap passes know its norms launch nothing.
		constraint{"chooseDecodeAttention", "chooseQKNormFolds"}, constraint{"chooseQKNormFolds", "planMemory"},
		constraint{"chooseQKNormFolds", "chooseLateStarts"}, constraint{"chooseQKNormFolds", "verifyFinal"},
		// An MoE's GEMM tiles are checked with the planned graph.
		constraint{"chooseMoETiles", "verifyFinal"},
		// A matrix node's GEMM tiles are chosen where its kernels are the
		// GEMM, and checked with the planned graph.
		constraint{"chooseKernels", "chooseGEMMTiles"}, constraint{"chooseGEMMTiles", "verifyFinal"},
		// An MoE picks early by its kernel.
		constraint{"chooseKernels", "chooseEarlyPicks"}, constraint{"chooseEarlyPicks", "verifyFinal"},
		// A linear starts late where it stages its input, and which launch
		// lets it start follows from which nodes launch and quantize.
		constraint{"chooseStaging", "chooseLateStarts"}, constraint{"chooseLateStarts", "verifyFinal"},
		// A residual's writer completes by the launches between it and its
		// reader, the late starts' at-end launches among them.
		constraint{"chooseLateStarts", "chooseEarlyResiduals"}, constraint{"chooseEarlyResiduals", "verifyFinal"},
		// The prefill attentions' splits are chosen for the final node set.
		constraint{"eliminateDead", "choosePrefillSplits"}, constraint{"choosePrefillSplits", "verifyFinal"})
	return c
}()

// Options control Run.
type Options struct {
	Target    string    // "cpu", or a CUDA arch such as "sm_90"
	Verify    bool      // run ir.Verify after every pass (tests turn it on)
	DumpAfter string    // a pass name: print the graph to Dump after it runs
	Dump      io.Writer // where DumpAfter prints
}

// IsGPU reports whether target is a CUDA arch.
func IsGPU(target string) bool { return strings.HasPrefix(target, "sm_") && len(target) > 3 }

// Names lists the passes in pipeline order (for --dump-after validation).
func Names() []string {
	names := make([]string, len(Pipeline))
	for i, p := range Pipeline {
		names[i] = p.Name
	}
	return names
}

// Run runs the pipeline on g for o.Target.
func Run(g *ir.Graph, o Options) error {
	gpu := IsGPU(o.Target)
	if !gpu && o.Target != "cpu" {
		return fmt.Errorf("passes: unknown target %q (want cpu or a CUDA arch like sm_90)", o.Target)
	}
	if gpu {
		if _, err := GPUTarget(o.Target); err != nil {
			return fmt.Errorf("passes: %w", err)
		}
		// The GPU passes read the target's description (chooseKernels).
		g.Attrs["target"] = o.Target
	}
	if o.DumpAfter != "" {
		p, ok := find(o.DumpAfter)
		if !ok {
			return fmt.Errorf("passes: --dump-after %q is not a pass (passes: %s)", o.DumpAfter, strings.Join(Names(), ", "))
		}
		if p.Targets == GPUTargets && !gpu {
			return fmt.Errorf("passes: pass %s runs only for GPU targets, not %s", p.Name, o.Target)
		}
		if o.Dump == nil {
			return fmt.Errorf("passes: --dump-after %s with nowhere to print", o.DumpAfter)
		}
	}
	for _, p := range Pipeline {
		if p.Targets == GPUTargets && !gpu {
			continue
		}
		if err := p.Fn(g); err != nil {
			return fmt.Errorf("pass %s: %w", p.Name, err)
		}
		if o.Verify {
			if err := ir.Verify(g); err != nil {
				return fmt.Errorf("after pass %s: %w", p.Name, err)
			}
		}
		if p.Name == o.DumpAfter {
			if _, err := fmt.Fprintf(o.Dump, "# after %s\n%s", p.Name, ir.Print(g)); err != nil {
				return fmt.Errorf("passes: dumping after %s: %w", p.Name, err)
			}
		}
	}
	return nil
}

func find(name string) (Pass, bool) {
	for _, p := range Pipeline {
		if p.Name == name {
			return p, true
		}
	}
	return Pass{}, false
}

package passes

import (
	"github.com/llama-orch/orc/ir"
)

// chooseStaging decides, once the codes' producers are chosen (chooseCodes),
// which integer linears quantize their own input in shared memory
// (linear_q8's QX, q8_rows.cu.tmpl) instead of reading int16 codes from
// the scratch after a quantize_x8 launch, and records it for codegen/cuda:
// stages_x in decode, prefill_stages_x in a prefill. A q8 linear stages x
// where a block serves one token, x's int16 row and scales fit
// StagedXBytes, its grid is at most StagedXBlocks (resident at once, so
// the redundant quantization costs one block's time), and the scratch does
// not hold x's codes already when it runs: codegen's int16 scratch, walked
// in schedule order, holds the codes a producer wrote with its output
// (writes_codes, a router norm's), or that a reader's quantize_x8 wrote,
// until a GEMM's f16 input or a MoE's own scratch overwrites it.
func chooseStaging(g *ir.Graph) error {
	gpu, err := graphGPU(g)
	if err != nil {
		return err
	}
	for _, n := range g.Nodes {
		delete(n.Attrs, "stages_x")
		delete(n.Attrs, "prefill_stages_x")
	}
	users := users(g)
	for _, prefill := range []bool{false, true} {
		s := scratchWalk{gpu: gpu, users: users, prefill: prefill}
		for _, n := range g.Nodes {
			if n.Op == ir.OpLinear && n.Str(s.key("kernel")) == ir.KernelQ8 && s.stages(n) {
				n.Attrs[s.key("stages_x")] = true
			}
			s.step(n)
		}
	}
	return nil
}

// quantizingX are the nodes that launch quantize_x8 for their input x
// before their kernel in decode: an integer-path node whose kernel neither
// stages x (stages_x) nor folds x's norm in (fold_norm), where the scratch
// does not hold x's codes when it runs.
func quantizingX(g *ir.Graph, gpu GPU) map[*ir.Node]bool {
	s := scratchWalk{gpu: gpu, users: users(g)}
	q := map[*ir.Node]bool{}
	for _, n := range g.Nodes {
		if s.step(n) {
			q[n] = true
		}
	}
	return q
}

// scratchWalk follows, node by node through one schedule, the value whose
// int16 codes codegen's scratch holds (held; nil: none). The value, not its
// arena offset: a later value the memory plan puts at the same offset
// overwrites the row, not the codes.
type scratchWalk struct {
	gpu     GPU
	users   map[*ir.Node][]*ir.Node
	prefill bool
	held    *ir.Node
}

// key is attribute k of the schedule walked: k in decode, prefill_k in a
// prefill.
func (s *scratchWalk) key(k string) string {
	if s.prefill {
		return "prefill_" + k
	}
	return k
}

// step moves held past node n's launches (its staging recorded) and
// reports whether n quantizes its input x first (quantize_x8): a reader of
// x's codes where the scratch does not hold them.
func (s *scratchWalk) step(n *ir.Node) (quantizes bool) {
	kernel := n.Str(s.key("kernel"))
	switch {
	case kernel == ir.KernelGEMM || n.Op == ir.OpMoE && (s.prefill || kernel != ir.KernelQ8):
		s.held = nil // gemm_x_f16's input, or the MoE scratch, over the codes
	case n.Op == ir.OpLinear && kernel == ir.KernelQ8 && n.Bool(s.key("stages_x")):
	case n.Op == ir.OpLinear && kernel == ir.KernelMMA:
		// linear_mmas reads the codes where the scratch holds them, else
		// quantizes its slabs of the f32 row itself (QX): no quantize_x8.
	case isMatrix(n) && kernel == ir.KernelQ8 || n.Op == ir.OpMoE && kernel == ir.KernelQ8 ||
		isMatrix(n) && kernel == ir.KernelMMA && !(n.Bool("fold_norm") && !s.prefill):
		x := s.value(n.Inputs[0])
		quantizes = x != s.held
		s.held = x // quantize_x8's, or its producer's
	}
	if v := s.codesWritten(n); v != nil {
		s.held = s.value(v)
	}
	return quantizes
}

// stages reports whether q8 linear n quantizes its input x itself.
func (s *scratchWalk) stages(n *ir.Node) bool {
	x := n.Inputs[0]
	in := x.Shape[len(x.Shape)-1]
	_, blocks := s.gpu.LinearQ8Blocks(n.Inputs[1].DType, in, n.Shape[len(n.Shape)-1])
	return TokenTile(x, s.prefill) == 1 && in*2+in/32*8 <= StagedXBytes && blocks <= s.gpu.StagedXBlocks() &&
		s.value(x) != s.held
}

// codesWritten is the value whose codes node n writes with its output in
// the schedule walked, or nil.
func (s *scratchWalk) codesWritten(n *ir.Node) *ir.Node {
	v, _ := codesOf(n, s.users)
	if v == nil {
		return nil
	}
	if !s.prefill && n.Bool("router_logits") {
		return v // rmsnorm_logits writes the normed row's codes
	}
	if !n.Bool(s.key("writes_codes")) {
		return nil
	}
	if n.Op == ir.OpSwiGLULinear && !s.swigluWritesCodes(n) {
		return nil
	}
	if !s.prefill && normFolded(n, s.users) {
		return nil // its reader normalizes the row itself: no launch
	}
	return v
}

// swigluWritesCodes reports whether swiglu_linear n's kernel writes its
// output's codes (swiglu_q8's Q8) in the schedule walked.
func (s *scratchWalk) swigluWritesCodes(n *ir.Node) bool {
	x := n.Inputs[0]
	lanes, _ := s.gpu.IntLanes(n.Inputs[1].DType, x.Shape[len(x.Shape)-1], 2*n.Shape[len(n.Shape)-1])
	return n.Str(s.key("kernel")) == ir.KernelQ8 && TokenTile(x, s.prefill) == 1 && SwiGLUQ8Sets*lanes <= MaxSwiGLUThreads
}

// value is the value whose codes reading v reads in the schedule walked:
// a decode last row in place is its input.
func (s *scratchWalk) value(v *ir.Node) *ir.Node {
	for v.Op == ir.OpLast && !s.prefill && v.Bool("row_in_place") {
		v = v.Inputs[0]
	}
	return v
}

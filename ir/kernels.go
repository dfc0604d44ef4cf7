package ir

import (
	"fmt"
	"slices"
)

// Kernel families, the values of the attributes with which a GPU target's
// kernel choice (passes, chooseKernels) records on each matrix node
// (linear, qkv, swiglu_linear) and moe which kernel serves it in each
// schedule: "kernel" in decode, "prefill_kernel" in a prefill.
const (
	KernelGEMM = "gemm" // a tensor-core GEMM of the step's rows in f16
	KernelGEMV = "gemv" // fp32 dots of dequantized weights
	KernelQ8   = "q8"   // integer dots of int16 activations
	KernelMMA  = "mma"  // int8 tensor cores, one token
	// KernelMMATokens: int8 tensor cores over a few tokens (the mma n
	// dimension), the integer path's int16 activations.
	KernelMMATokens = "mma_tokens"
	// KernelMMAHalves: f16 tensor cores over a few tokens, the K-quants'
	// integer scale·code times the f32 activations as two f16 halves, each
	// row's super-blocks split over a thread-block cluster.
	KernelMMAHalves = "mma_halves"
)

// MMAHBlocks is the mma_halves blocks an SM: the shape rule's residency
// and the launch bound codegen gives a grid that fills them (a lane holds
// two walk items' fetches, about 110-130 registers).
const MMAHBlocks = 2

// The attributes that describe a kernel choice beside the families: a
// tensor-core kernel's warps, super-blocks a warp and weight stream
// (mma_warps, mma_upw, stream_smem, stream_blocks, all > 0), and a decode
// mma linear's K-slab and stages (mma_slab: 256·mma_warps·mma_upw elements,
// whole slabs a row; mma_stages ≥ 2, stream_smem whole stages); fold_norm, on
// a decode mma kernel that normalizes its input itself (its input the
// normed row of an rmsnorm or add_rmsnorm); writes_sum, on a decode q8
// or mma linear that writes the sum of the add_rmsnorm reading it; stages_x and
// prefill_stages_x, on a q8 linear that quantizes its own input in that
// schedule; pick_early, on a q8 MoE whose decode down kernel picks its
// experts before its wait; starts_late, on a decode mma kernel or a linear
// that stages its input, launched only when the grid before it completes,
// and quantize_at_end, on one that quantizes its input first, whose
// quantize_x8 lets it launch then; residual_before_wait, on a writes_sum
// linear that reads the residual before its wait; batch_kernel, on a
// matrix node after the graph's last row, its kernel in a batched step,
// where it runs once per sequence over the step's rows (a prefill family);
// batch_decode_kernel, on a matrix node or MoE before it, its kernel in a
// batched step of decode tokens alone (a prefill family); mmat_slab, on a
// node whose mma_tokens kernel streams its weight tiles through shared
// memory, the K-slab of a chunk (> 0), and mmat_stage_x, on one whose
// stream also stages its activations there; mmah_cluster, mmah_warps,
// mmah_x_halves and mmah_clusters, on a node whose mma_halves kernel runs
// in thread-block clusters of mmah_cluster blocks (each a range of every
// row's super-blocks) of mmah_warps warps, the activations as
// mmah_x_halves f16 halves (1 or 2), mmah_clusters of them (all > 0);
// and the choices of decisionOps.
var kernelAttrKinds = map[string]string{
	"kernel": "string", "prefill_kernel": "string", "batch_kernel": "string", "batch_decode_kernel": "string",
	"mma_warps": "int64", "mma_upw": "int64", "stream_smem": "int64", "stream_blocks": "int64", "mma_slab": "int64", "mma_stages": "int64",
	"fold_norm": "bool", "writes_sum": "bool", "stages_x": "bool", "prefill_stages_x": "bool", "pick_early": "bool", "starts_late": "bool",
	"quantize_at_end": "bool", "launch_at_end": "bool", "residual_before_wait": "bool",
	"router_logits": "bool", "row_in_place": "bool", "writes_codes": "bool", "prefill_writes_codes": "bool",
	"batch_decode_writes_codes": "bool",
	"mmat_slab":                 "int64", "mmat_stage_x": "bool",
	"mmah_cluster": "int64", "mmah_warps": "int64", "mmah_x_halves": "int64", "mmah_clusters": "int64",
	foldQKNorm: "bool", foldKVStore: "bool", qkvStoresKV: "bool",
}

// codeWriters are the ops whose kernels can write their output's int16
// codes too.
var codeWriters = []Op{OpRMSNorm, OpLayerNorm, OpAddRMSNorm, OpAddLayerNorm, OpAddPostNorm, OpAttention, OpLast, OpSwiGLULinear}

// decisionOps are the ops each of the choices that need no kernel family
// may be recorded on: router_logits, on an rmsnorm or add_rmsnorm that
// computes the router logits of the q8 MoE reading its normed row;
// row_in_place, on a decode last row that is its input in place;
// writes_codes and prefill_writes_codes, on a producer that also writes
// its output's int16 codes in that schedule, and batch_decode_writes_codes
// in a batched step of decode tokens alone (a norm: rmsnorm_rows' Q8, the
// batched step's one code writer); launch_at_end, on a node
// whose last decode launch lets the next grid, which starts late, launch
// only at its end (verifyLateStarts); fold_qk_norm, on an attention whose
// decode kernel normalizes and rotates its q and k itself
// (verifyQKNormFolds); fold_kv_store, on an attention whose decode kernel
// stores the step's k, v in its 8-bit cache itself, and qkv_stores_kv, on
// one whose qkv kernels store them (both verifyKVCache).
var decisionOps = map[string][]Op{
	"router_logits":             {OpRMSNorm, OpAddRMSNorm},
	"row_in_place":              {OpLast},
	"writes_codes":              codeWriters,
	"prefill_writes_codes":      codeWriters,
	"batch_decode_writes_codes": {OpRMSNorm, OpLayerNorm, OpAddRMSNorm, OpAddLayerNorm, OpAddPostNorm},
	"launch_at_end":             launchingOps(),
	foldQKNorm:                  {OpAttention},
	foldKVStore:                 {OpAttention},
	qkvStoresKV:                 {OpAttention},
}

// launchingOps are the ops that may launch a kernel: all but inputs,
// weights and views.
func launchingOps() []Op {
	var ops []Op
	for op := range Ops {
		if op != OpInput && op != OpWeight && op != OpView {
			ops = append(ops, op)
		}
	}
	slices.Sort(ops)
	return ops
}

// kernelFamilies are the families each op may take, by schedule.
var kernelFamilies = map[Op][2][]string{ // decode, prefill
	OpLinear:       {{KernelGEMV, KernelQ8, KernelMMA}, {KernelGEMM, KernelGEMV, KernelQ8, KernelMMATokens, KernelMMAHalves}},
	OpQKV:          {{KernelGEMV, KernelQ8, KernelMMA}, {KernelGEMM, KernelGEMV, KernelQ8, KernelMMA, KernelMMATokens, KernelMMAHalves}},
	OpSwiGLULinear: {{KernelGEMV, KernelQ8, KernelMMA}, {KernelGEMM, KernelGEMV, KernelQ8, KernelMMA, KernelMMATokens, KernelMMAHalves}},
	OpMoE:          {{KernelGEMV, KernelQ8}, {KernelGEMM, KernelMMATokens}},
}

// verifyKernelChoice checks a node's kernel-choice attributes, where it has
// any: both families, each one its op may take, the tensor-core shape where
// either is mma, fold_norm and writes_sum where they can hold.
func verifyKernelChoice(n *Node) error {
	if err := checkAttrValues("attr", n.Attrs, kernelAttrKinds); err != nil {
		return err
	}
	for k, ops := range decisionOps {
		if n.Bool(k) && !slices.Contains(ops, n.Op) {
			return fmt.Errorf("%s on a %s, which cannot take it (%v can)", k, n.Op, ops)
		}
	}
	_, dec := n.Attrs["kernel"]
	_, pre := n.Attrs["prefill_kernel"]
	if !dec && !pre {
		for k := range kernelAttrKinds {
			if _, ok := n.Attrs[k]; ok && decisionOps[k] == nil {
				return fmt.Errorf("attr %s without a kernel", k)
			}
		}
		return nil
	}
	fams, ok := kernelFamilies[n.Op]
	if !ok {
		return fmt.Errorf("kernel %q, prefill_kernel %q on an op that takes no kernel choice", n.Str("kernel"), n.Str("prefill_kernel"))
	}
	if !dec || !pre {
		return fmt.Errorf("kernel %q, prefill_kernel %q: a %s takes both or neither", n.Str("kernel"), n.Str("prefill_kernel"), n.Op)
	}
	if _, ok := n.Attrs["batch_kernel"]; ok && !slices.Contains(fams[1], n.Str("batch_kernel")) {
		return fmt.Errorf("batch_kernel %q: a %s over a batched step's rows takes one of %v", n.Str("batch_kernel"), n.Op, fams[1])
	}
	if _, ok := n.Attrs["batch_decode_kernel"]; ok && !slices.Contains(fams[1], n.Str("batch_decode_kernel")) {
		return fmt.Errorf("batch_decode_kernel %q: a %s over a batched decode step's tokens takes one of %v", n.Str("batch_decode_kernel"), n.Op, fams[1])
	}
	mma := false
	for i, k := range []string{"kernel", "prefill_kernel"} {
		if !slices.Contains(fams[i], n.Str(k)) {
			return fmt.Errorf("%s %q: a %s takes one of %v", k, n.Str(k), n.Op, fams[i])
		}
		mma = mma || n.Str(k) == KernelMMA
	}
	for _, k := range []string{"mma_warps", "mma_upw", "stream_smem", "stream_blocks"} {
		if _, has := n.Attrs[k]; has != mma || mma && n.Int(k) <= 0 {
			return fmt.Errorf("attr %s = %v with kernels %s, %s (a tensor-core kernel's shape, > 0)", k, n.Attrs[k], n.Str("kernel"), n.Str("prefill_kernel"))
		}
	}
	if err := verifyLinearSlabs(n); err != nil {
		return err
	}
	if _, ok := n.Attrs["mmat_slab"]; ok && (n.Int("mmat_slab") <= 0 || !slices.ContainsFunc([]string{"prefill_kernel", "batch_kernel", "batch_decode_kernel"}, func(k string) bool { return n.Str(k) == KernelMMATokens })) {
		return fmt.Errorf("mmat_slab = %d on a %s whose kernels are %s, %s, %s: an mma_tokens kernel streams slabs of > 0 elements", n.Int("mmat_slab"), n.Op, n.Str("prefill_kernel"), n.Str("batch_kernel"), n.Str("batch_decode_kernel"))
	}
	halves := slices.ContainsFunc([]string{"prefill_kernel", "batch_kernel", "batch_decode_kernel"}, func(k string) bool { return n.Str(k) == KernelMMAHalves })
	for _, k := range []string{"mmah_cluster", "mmah_warps", "mmah_x_halves", "mmah_clusters"} {
		if _, has := n.Attrs[k]; has != halves || halves && (n.Int(k) <= 0 || k == "mmah_x_halves" && n.Int(k) > 2) {
			return fmt.Errorf("attr %s = %v on a %s whose kernels are %s, %s, %s (an mma_halves kernel's shape, > 0, x halves ≤ 2)", k, n.Attrs[k], n.Op, n.Str("prefill_kernel"), n.Str("batch_kernel"), n.Str("batch_decode_kernel"))
		}
	}
	if n.Bool("mmat_stage_x") && n.Int("mmat_slab") <= 0 {
		return fmt.Errorf("mmat_stage_x on a %s that does not stream (mmat_slab): a streamed mma_tokens kernel stages its activations", n.Op)
	}
	if n.Bool("fold_norm") {
		x := n.Inputs[0]
		if n.Str("kernel") != KernelMMA || NormBehind(x) == nil {
			return fmt.Errorf("fold_norm on a %s kernel over %s: a decode mma kernel folds the rmsnorm of its input", n.Str("kernel"), x.Op)
		}
	}
	if n.Bool("writes_sum") && (n.Op != OpLinear || n.Str("kernel") != KernelQ8 && n.Str("kernel") != KernelMMA) {
		return fmt.Errorf("writes_sum on a %s %s: a decode q8 or mma linear writes a sum", n.Str("kernel"), n.Op)
	}
	for stages, kernel := range map[string]string{"stages_x": "kernel", "prefill_stages_x": "prefill_kernel"} {
		if n.Bool(stages) && (n.Op != OpLinear || n.Str(kernel) != KernelQ8) {
			return fmt.Errorf("%s on a %s %s: a q8 linear stages its input", stages, n.Str(kernel), n.Op)
		}
	}
	if n.Bool("starts_late") && n.Str("kernel") != KernelMMA && !n.Bool("stages_x") {
		return fmt.Errorf("starts_late on a %s %s: a decode mma kernel or a linear staging its input starts late", n.Str("kernel"), n.Op)
	}
	if n.Bool("quantize_at_end") && (!n.Bool("starts_late") || n.Bool("stages_x")) {
		return fmt.Errorf("quantize_at_end on a %s %s: a kernel that starts late after quantizing its input", n.Str("kernel"), n.Op)
	}
	if n.Bool("pick_early") && (n.Op != OpMoE || n.Str("kernel") != KernelQ8) {
		return fmt.Errorf("pick_early on a %s %s: a decode q8 MoE picks its experts early", n.Str("kernel"), n.Op)
	}
	if n.Bool("residual_before_wait") && !n.Bool("writes_sum") {
		return fmt.Errorf("residual_before_wait on a %s %s: a decode q8 linear writing a sum reads its residual", n.Str("kernel"), n.Op)
	}
	return nil
}

// NormBehind is the RMSNorm whose normed row x is (x itself, or part 1 of
// an add_rmsnorm or add_post_rmsnorm), or nil. A decode kernel reading
// such a row may fold the norm in and read the norm's inputs itself
// (fold_norm; passes, chooseKernels), so that the norm launches nothing:
// the memory plan keeps those inputs alive through the readers that do.
func NormBehind(x *Node) *Node {
	switch {
	case x.Op == OpRMSNorm:
		return x
	case x.Op == OpView && x.Int("part") == 1 && (x.Inputs[0].Op == OpAddRMSNorm || x.Inputs[0].Op == OpAddPostNorm):
		return x.Inputs[0]
	}
	return nil
}

// verifyLateStarts checks that the late starts and the launches letting
// them start pair up (chooseLateStarts): in node order, a node that starts
// late without quantizing its input first (quantize_at_end) follows a
// launch_at_end, and a launch_at_end is followed by one, with only nodes
// between that may launch nothing in decode (inputs, weights, views, a
// last row, an RMSNorm its reader folds).
func verifyLateStarts(g *Graph) error {
	var atEnd *Node // a launch_at_end whose late start is to come
	for _, n := range g.Nodes {
		late := n.Bool("starts_late") && !n.Bool("quantize_at_end")
		switch {
		case late && atEnd == nil:
			return fmt.Errorf("%%%d %s starts late, but no node before it records launch_at_end", n.ID, n.Op)
		case late:
			atEnd = nil
		case atEnd != nil && !slices.Contains(mayLaunchNothing, n.Op):
			return fmt.Errorf("%%%d %s records launch_at_end, but %%%d %s, which launches after it, does not start late", atEnd.ID, atEnd.Op, n.ID, n.Op)
		}
		if n.Bool("launch_at_end") {
			atEnd = n
		}
	}
	if atEnd != nil {
		return fmt.Errorf("%%%d %s records launch_at_end, but no node after it starts late", atEnd.ID, atEnd.Op)
	}
	return nil
}

// mayLaunchNothing are the ops whose nodes may launch nothing in decode:
// inputs, weights, views, a last row in place, a norm folded into its
// reader, a q/k norm_rope folded into its attention (fold_qk_norm).
var mayLaunchNothing = []Op{OpInput, OpWeight, OpView, OpLast, OpRMSNorm, OpAddRMSNorm, OpAddPostNorm, OpNormRoPE}

// verifyLinearSlabs checks a decode mma linear's slabs (mma_slab,
// mma_stages), which it alone records: whole slabs of 256·mma_warps·mma_upw
// elements a row, at least two stages, its shared memory whole stages.
func verifyLinearSlabs(n *Node) error {
	_, slab := n.Attrs["mma_slab"]
	_, stages := n.Attrs["mma_stages"]
	linear := n.Op == OpLinear && n.Str("kernel") == KernelMMA
	if slab != linear || stages != linear {
		return fmt.Errorf("mma_slab = %v, mma_stages = %v on a %s %s: a decode mma linear records both", n.Attrs["mma_slab"], n.Attrs["mma_stages"], n.Str("kernel"), n.Op)
	}
	if !linear {
		return nil
	}
	in := n.Inputs[0].Shape[len(n.Inputs[0].Shape)-1]
	s, st := n.Int("mma_slab"), n.Int("mma_stages")
	if s != 256*n.Int("mma_warps")*n.Int("mma_upw") || s <= 0 || in%s != 0 {
		return fmt.Errorf("mma_slab = %d with %d warps of %d super-blocks over rows of %d: a slab is a super-block a warp's, whole slabs a row", s, n.Int("mma_warps"), n.Int("mma_upw"), in)
	}
	if st < 2 || n.Int("stream_smem")%st != 0 {
		return fmt.Errorf("mma_stages = %d with stream_smem %d: at least two whole stages", st, n.Int("stream_smem"))
	}
	return nil
}

package passes

import (
	"github.com/llama-orch/orc/ir"
)

// kernelAttrs are the attributes chooseKernels records (ir/kernels.go);
// it drops them first, so that it can run again.
var kernelAttrs = []string{"kernel", "prefill_kernel", "batch_kernel", "batch_decode_kernel", "mma_warps", "mma_upw", "mma_slab", "mma_stages", "stream_smem", "stream_blocks", "fold_norm", "writes_sum", "router_logits", "mmat_slab", "mmat_stage_x", "mmah_cluster", "mmah_warps", "mmah_x_halves", "mmah_clusters"}

// chooseKernels decides, for the graph's GPU target (the graph attribute
// target), which kernel family serves each matrix node and MoE in each
// schedule, and the decode rewrites that change what a node's kernel
// reads and writes, and records them on the nodes for codegen/cuda to
// print and planMemory to keep buffers for:
//
//   - kernel, prefill_kernel: gemm (a prefill over the step's T rows whose
//     width the f16 staging reads as whole float4s), else the integer path
//     where the weights have an integer dot and rows are whole 32-groups
//     (one accessor for gate and up, one group size for q, k and v): mma
//     for a qkv or swiglu_linear of one token whose weights have MmaCodes
//     and stream (a SwiGLU whose output feeds the integer path keeps q8,
//     which quantizes it), else q8; else gemv. moe: q8 or gemv in decode,
//     gemm (the experts' GEMMs over their slots) in a prefill.
//     A decode linear before the graph's last row takes mma (linear_mmas:
//     tiles of 16 rows streamed in K-slabs) where GPU.LinearSlabs says its
//     blocks have slabs to pipeline; the LM head keeps q8 (its greedy pick).
//   - mma_warps, mma_upw, stream_smem, stream_blocks: a tensor-core
//     kernel's warps, super-blocks a warp and stream; mma_slab and
//     mma_stages, a linear's K-slab (elements, 256·mma_warps·mma_upw) and
//     its stages (stream_smem is whole stages).
//   - fold_norm: a decode mma kernel whose input is the RMSNorm row only it
//     reads (ir.NormBehind) normalizes it itself; the norm launches nothing,
//     and the kernel reads the norm's inputs.
//   - writes_sum: a decode q8 linear adds the residual into its rows and
//     writes the sum of the add_rmsnorm that reads it (ResidualWriter),
//     whose normed row a fold_norm kernel then reads alone.
//   - router_logits: a decode RMSNorm whose normed row only a q8 MoE reads,
//     whose router is a plain-float matrix (read one element at a time),
//     computes that MoE's router logits itself (rmsnorm_logits).
//   - batch_kernel: a matrix node after the graph's one last node (the LM
//     head) runs in a batched step once per sequence, over the step's
//     rows: mma_halves as batch_decode_kernel takes it below, else
//     mma_tokens where its weights have tensor-core fragments
//     (mmaTokens: the rows, at most 64, are a few n-tiles of 8), else the
//     prefill's rule for rows of T, gemm where the width is whole float4
//     pairs (the weights read once for all rows), else gemv.
//   - batch_decode_kernel: a matrix node before that last node, its kernel
//     in a batched step of decode tokens alone (every row one token, at
//     most BatchDecodeRows): mma_tokens where its weights have tensor-core
//     fragments — each weight group unpacked once for all the step's
//     tokens, the n dimension of the tensor cores — else q8 where the
//     integer path serves it (each block's weight groups used for
//     PrefillTile tokens, where the prefill's tensor-core GEMM tiles of 64
//     rows launch out/128 latency-bound blocks), else its prefill_kernel;
//     but mma_halves ahead of them where its weights are K-quants with
//     MmaH fragments (Q4_K, Q5_K and Q6_K laid out; mmaHalves) and a shape
//     fits (GPU.MMAHalvesShape, recorded as mmah_cluster, mmah_warps,
//     mmah_x_halves, mmah_clusters): no scale product per 32 elements, each activation
//     read from L2 once a block, no quantize launch.
//     An MoE's: mma_tokens where its experts' weights have tensor-core
//     fragments (moeTokens: each routed expert's weights read once for
//     its slots of the step, the slots the n dimension), else its prefill
//     GEMMs (tiled by chooseMoETiles).
//   - mmat_slab, mmat_stage_x: a node whose batch_kernel or
//     batch_decode_kernel is mma_tokens streams its weight tiles through
//     shared memory in K-slabs of mmat_slab elements where its weights
//     stream (GPU.MMATokensSlab: one layout) and it has at least a tile an
//     SM (fewer run as one round), and stages its activations there too
//     where they fit beside the stages (GPU.MMATokensStreams).
func chooseKernels(g *ir.Graph) error {
	gpu, err := graphGPU(g)
	if err != nil {
		return err
	}
	c := &kernelChooser{gpu: gpu, users: users(g), head: map[*ir.Node]bool{}}
	for _, n := range afterLast(g) {
		c.head[n] = true
	}
	maxTokens, _ := g.Attrs["max_tokens"].(int64)
	for _, n := range g.Nodes {
		for _, k := range kernelAttrs {
			delete(n.Attrs, k)
		}
	}
	// The integer path first: whether a SwiGLU takes the tensor cores
	// depends on whether its readers read int16 activations.
	for _, n := range g.Nodes {
		switch {
		case isMatrix(n):
			n.Attrs["prefill_kernel"] = c.family(n, true)
			n.Attrs["kernel"] = c.family(n, false)
		case n.Op == ir.OpMoE:
			n.Attrs["prefill_kernel"] = ir.KernelGEMM
			n.Attrs["kernel"] = ir.KernelGEMV
			if c.moeIntDot(n) {
				n.Attrs["kernel"] = ir.KernelQ8
			}
		}
	}
	for _, n := range g.Nodes {
		if isMatrix(n) {
			for _, key := range []string{"prefill_kernel", "kernel"} {
				if n.Str(key) == ir.KernelQ8 && c.mma(n, key == "prefill_kernel") {
					n.Attrs[key] = ir.KernelMMA
				}
			}
		}
	}
	for _, n := range afterLast(g) {
		if isMatrix(n) {
			n.Attrs["batch_kernel"] = ir.KernelGEMV
			x := n.Inputs[0]
			switch {
			case recordMMAHalves(gpu, n, "batch_kernel", maxTokens):
			case mmaTokens(n):
				n.Attrs["batch_kernel"] = ir.KernelMMATokens
			case x.Shape[len(x.Shape)-1]%8 == 0:
				n.Attrs["batch_kernel"] = ir.KernelGEMM
			}
		}
	}
	for _, n := range beforeLast(g) {
		switch {
		case isMatrix(n):
			n.Attrs["batch_decode_kernel"] = n.Str("prefill_kernel")
			switch {
			case recordMMAHalves(gpu, n, "batch_decode_kernel", maxTokens):
			case mmaTokens(n):
				n.Attrs["batch_decode_kernel"] = ir.KernelMMATokens
			case intDot(n):
				n.Attrs["batch_decode_kernel"] = ir.KernelQ8
			}
		case n.Op == ir.OpMoE:
			n.Attrs["batch_decode_kernel"] = n.Str("prefill_kernel")
			if moeTokens(n) {
				n.Attrs["batch_decode_kernel"] = ir.KernelMMATokens
			}
		}
	}
	for _, n := range g.Nodes {
		if isMatrix(n) && (n.Str("batch_kernel") == ir.KernelMMATokens || n.Str("batch_decode_kernel") == ir.KernelMMATokens) {
			c.streamTokens(n)
		}
	}
	for _, n := range g.Nodes {
		if n.Str("kernel") == ir.KernelMMA && n.Op != ir.OpLinear {
			if x := n.Inputs[0]; ir.NormBehind(x) != nil && len(c.users[x]) == 1 {
				n.Attrs["fold_norm"] = true
			}
		}
	}
	for _, n := range g.Nodes {
		if l, _ := residualWriter(n, c.users); l != nil && (l.Str("kernel") == ir.KernelQ8 || l.Str("kernel") == ir.KernelMMA) {
			l.Attrs["writes_sum"] = true
		}
		if routesMoE(n, c.users) {
			n.Attrs["router_logits"] = true
		}
	}
	return nil
}

// afterLast is the nodes after g's one last node (none where it has not
// exactly one): what a batched step runs once per sequence.
func afterLast(g *ir.Graph) []*ir.Node {
	if at := lastAt(g); at >= 0 {
		return g.Nodes[at+1:]
	}
	return nil
}

// beforeLast is the nodes before g's one last node (none where it has not
// exactly one): what a batched step runs once per token.
func beforeLast(g *ir.Graph) []*ir.Node {
	if at := lastAt(g); at >= 0 {
		return g.Nodes[:at]
	}
	return nil
}

// lastAt is the index of g's one last node, or -1 where it has none or
// several.
func lastAt(g *ir.Graph) int {
	at := -1
	for i, n := range g.Nodes {
		if n.Op == ir.OpLast {
			if at >= 0 {
				return -1
			}
			at = i
		}
	}
	return at
}

// routesMoE reports whether RMSNorm n computes the router logits of the MoE
// that alone reads its normed row (router_logits).
func routesMoE(n *ir.Node, users map[*ir.Node][]*ir.Node) bool {
	normed := n
	switch n.Op {
	case ir.OpRMSNorm:
	case ir.OpAddRMSNorm:
		normed = NormedPart(n, users)
	default:
		return false
	}
	if normed == nil || len(users[normed]) != 1 {
		return false
	}
	m := users[normed][0]
	if m.Op != ir.OpMoE || m.Inputs[0] != normed || len(ir.MoEInputs(m).Gate.Shape) != 3 || m.Str("kernel") != ir.KernelQ8 {
		return false
	}
	dt := ir.MoEInputs(m).Router.DType
	return dt == ir.F32 || dt == ir.F16 || dt == ir.BF16
}

// isMatrix reports whether n is a matrix node: linear, qkv, swiglu_linear.
func isMatrix(n *ir.Node) bool {
	return n.Op == ir.OpLinear || n.Op == ir.OpQKV || n.Op == ir.OpSwiGLULinear
}

type kernelChooser struct {
	gpu   GPU
	users map[*ir.Node][]*ir.Node
	head  map[*ir.Node]bool // the nodes after the graph's last row
}

// family is matrix node n's kernel family in a prefill or in decode,
// before the tensor cores are considered (mma).
func (c *kernelChooser) family(n *ir.Node, prefill bool) string {
	x := n.Inputs[0]
	switch {
	case prefill && x.Shape[0] == ir.T && x.Shape[len(x.Shape)-1]%8 == 0:
		return ir.KernelGEMM
	case intDot(n):
		return ir.KernelQ8
	}
	return ir.KernelGEMV
}

// intDot reports whether matrix node n can run on the integer path:
// weights with an integer dot, a row length of whole 32-groups, for
// swiglu_linear one layout for gate and up, for qkv one group size for q,
// k and v (one lane-set size serves them all).
func intDot(n *ir.Node) bool {
	x, w := n.Inputs[0], n.Inputs[1]
	if IntDotGroups[w.DType] == 0 || x.Shape[len(x.Shape)-1]%32 != 0 {
		return false
	}
	switch n.Op {
	case ir.OpSwiGLULinear:
		return len(n.Inputs) == 2 || layoutOf(n.Inputs[1]) == layoutOf(n.Inputs[2])
	case ir.OpQKV:
		g := IntDotGroups[w.DType]
		return IntDotGroups[n.Inputs[2].DType] == g && IntDotGroups[n.Inputs[3].DType] == g
	}
	return true
}

// mmaTokens reports whether matrix node n can run on the tensor cores over
// a few tokens (mma_tokens.cu.tmpl): on the integer path, with every
// weight of a dtype with MmaT fragments (MMATokenTypes).
func mmaTokens(n *ir.Node) bool {
	if !intDot(n) {
		return false
	}
	for _, w := range n.Inputs[1:] {
		if w.Op == ir.OpWeight && len(w.Shape) == 2 && !MMATokenTypes[w.DType] {
			return false
		}
	}
	return true
}

// streamTokens records whether matrix node n's mma_tokens kernel streams
// its weights (mmat_slab) and stages its activations too (mmat_stage_x):
// where its weights are of one layout (q, k and v's accessors differ in
// their blocks alone) that streams, in at least a tile an SM.
func (c *kernelChooser) streamTokens(n *ir.Node) {
	x, w := n.Inputs[0], n.Inputs[1]
	for _, o := range n.Inputs[2:] {
		if o.Op == ir.OpWeight && len(o.Shape) == 2 && (o.DType != w.DType || o.Str("layout") != w.Str("layout")) {
			return
		}
	}
	in, tiles := x.Shape[len(x.Shape)-1], MMATokenTiles(n)
	slab := MMATokensSlab(w, in)
	if _, ok := c.gpu.MMATokensStreams(w, in, tiles, slab, false); !ok || tiles < c.gpu.SMs {
		return
	}
	n.Attrs["mmat_slab"] = slab
	if _, ok := c.gpu.MMATokensStreams(w, in, tiles, slab, true); ok {
		n.Attrs["mmat_stage_x"] = true
	}
}

// moeTokens reports whether MoE n's experts can run on the tensor cores
// over a batched decode step's few slots (moe.cu.tmpl's moe_*_mmat): gate,
// up and down with MmaT fragments (MMATokenTypes, or MXFP4 in its GPU
// layout, whose fragments moe.cu.tmpl has), gate and up of one layout, rows
// of whole groups.
func moeTokens(n *ir.Node) bool {
	w := ir.MoEInputs(n)
	x := n.Inputs[0]
	for _, m := range []*ir.Node{w.Gate, w.Up, w.Down} {
		if !MMATokenTypes[m.DType] && !(m.DType == ir.MXFP4 && layoutOf(m).laidOut()) || len(m.Shape) != 3 {
			return false
		}
	}
	return layoutOf(w.Gate) == layoutOf(w.Up) && x.Shape[len(x.Shape)-1]%IntDotGroups[w.Gate.DType] == 0 &&
		w.Down.Shape[2]%IntDotGroups[w.Down.DType] == 0
}

// moeIntDot reports whether MoE n's decode runs on the integer path:
// gate/up and down weights with an integer dot, rows of whole groups, and
// top_k dividing MoEWarps (moe_down_sum_q8 gives each chosen expert the
// same number of warps).
func (c *kernelChooser) moeIntDot(n *ir.Node) bool {
	w := ir.MoEInputs(n)
	x, wg, wd := n.Inputs[0], w.Gate, w.Down
	gate, down := IntDotGroups[wg.DType], IntDotGroups[wd.DType]
	return gate != 0 && down != 0 && x.Shape[len(x.Shape)-1]%gate == 0 &&
		wd.Shape[len(wd.Shape)-1]%down == 0 && n.Int("top_k") > 0 && MoEWarps%n.Int("top_k") == 0
}

// mma reports whether integer-path qkv or swiglu_linear n takes the tensor
// cores in the schedule, and records their shape: a qkv whose q, k and v
// each have MmaCodes (each its own accessor: grouped k and v, Q6_K's v),
// whose pairs qkv_mma forms (qkvMMAPairs) and whose stages fit; a swiglu_linear
// with MmaCodes whose rows stream in chunks of MMAChunk columns and whose
// output is not quantized for the integer path (swiglu_q8's Q8).
func (c *kernelChooser) mma(n *ir.Node, prefill bool) bool {
	x := n.Inputs[0]
	in := x.Shape[len(x.Shape)-1]
	var nw, upw int64
	var st Stream
	switch n.Op {
	case ir.OpQKV:
		var ok bool
		if nw, upw, ok = mmaWarps(in); !ok || !qkvMMAPairs(n) {
			return false
		}
		ws := n.Inputs[1:4]
		for _, w := range ws {
			if !layoutOf(w).qkvMMALayout() {
				return false
			}
		}
		parts := n.Ints("parts")
		st = c.gpu.MMAStreams(x, ws, prefill, in, (parts[0]+parts[1]+parts[2])/16, 2, 8) // chunks of 8 pairs
	case ir.OpSwiGLULinear:
		up := n.Inputs[len(n.Inputs)-1]
		var ok bool
		nw, upw, ok = MMAWarps(n.Inputs[1], up, in)
		f := n.Shape[len(n.Shape)-1]
		if !ok || c.swigluQuantizes(n, prefill) {
			return false
		}
		st = c.gpu.Streams(x, n.Inputs[1], prefill, in, ceilDiv(f, MMAChunk), 2, MMAChunk)
	case ir.OpLinear:
		if prefill || c.head[n] || TokenTile(x, prefill) != 1 {
			return false
		}
		ls, ok := c.gpu.LinearSlabs(n.Inputs[1], in, n.Shape[len(n.Shape)-1])
		if !ok {
			return false
		}
		nw, upw, st = ls.NW, 1, Stream{Smem: ls.Smem, Blocks: ls.Blocks}
		n.Attrs["mma_slab"], n.Attrs["mma_stages"] = 256*ls.NW, ls.Stages
	default:
		return false
	}
	if st.Smem == 0 {
		return false
	}
	n.Attrs["mma_warps"], n.Attrs["mma_upw"] = nw, upw
	n.Attrs["stream_smem"], n.Attrs["stream_blocks"] = st.Smem, st.Blocks
	return true
}

// qkvMMAPairs reports whether qkv n's parts are chunks of 8 rotation
// pairs, 16 rows, as qkv_mma takes them: parts of whole chunks, and with
// RoPE the rotation of whole heads of a multiple of 16 dims (NeoX pairs
// within a head's chunk, normal pairs consecutive).
func qkvMMAPairs(n *ir.Node) bool {
	for _, p := range n.Ints("parts") {
		if p%16 != 0 {
			return false
		}
	}
	hd, rot := n.Int("head_dim"), n.Int("rot_dim")
	switch n.Str("rope_mode") {
	case "":
		return true
	case "neox", "normal":
		return (rot == 0 || rot == hd) && hd%16 == 0
	}
	return false
}

// swigluQuantizes reports whether integer-path swiglu_linear n quantizes
// its output for the integer path (swiglu_q8's Q8): where a reader reads
// int16 activations, one token a block, in at most MaxSwiGLUThreads.
func (c *kernelChooser) swigluQuantizes(n *ir.Node, prefill bool) bool {
	x := n.Inputs[0]
	f := n.Shape[len(n.Shape)-1]
	s, _ := c.gpu.IntLanes(n.Inputs[1].DType, x.Shape[len(x.Shape)-1], 2*f)
	return TokenTile(x, prefill) == 1 && f%32 == 0 && feedsIntDot(n, c.users, prefill) && SwiGLUQ8Sets*s <= MaxSwiGLUThreads
}

// feedsIntDot reports whether value v is the input x of a node whose
// kernel in the schedule reads int16 activations (kernel q8 or mma; an MoE
// in decode), directly or through a decode last row in place
// (row_in_place, chooseCodes), so its producer may quantize it as it
// writes it.
func feedsIntDot(v *ir.Node, users map[*ir.Node][]*ir.Node, prefill bool) bool {
	key := "kernel"
	if prefill {
		key = "prefill_kernel"
	}
	for _, u := range users[v] {
		if u.Inputs[0] != v {
			continue
		}
		if k := u.Str(key); isMatrix(u) && (k == ir.KernelQ8 || k == ir.KernelMMA) || u.Op == ir.OpMoE && k == ir.KernelQ8 ||
			u.Op == ir.OpLast && !prefill && u.Bool("row_in_place") && feedsIntDot(u, users, prefill) {
			return true
		}
	}
	return false
}

// recordMMAHalves records mma_halves as node n's kernel attr, with its
// shape for steps of at most maxTokens tokens, where n can run so; it
// reports whether it did.
func recordMMAHalves(gpu GPU, n *ir.Node, attr string, maxTokens int64) bool {
	x := n.Inputs[0]
	shape, ok := gpu.MMAHalvesShape(x.Shape[len(x.Shape)-1], MMATokenTiles(n), maxTokens)
	if !mmaHalves(n) || !ok {
		return false
	}
	n.Attrs[attr] = ir.KernelMMAHalves
	shape.Record(n)
	return true
}

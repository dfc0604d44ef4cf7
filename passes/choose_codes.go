package passes

import (
	"slices"

	"github.com/llama-orch/orc/ir"
)

// chooseCodes decides, once buffers are planned (it reads arena offsets),
// where the integer path's int16 activation codes come from, and records
// it for codegen/cuda:
//
//   - row_in_place (last, decode): at T = 1 the last row of x is x, so the
//     last launches nothing and its readers read x itself, x's producer
//     writing its codes for them. Not for the graph's output (whose offset
//     both schedules share), nor where a reader that reads the f32 row
//     writes over x (the memory planner, seeing the last's own buffer, may
//     let it); a q8 linear too wide to stage its input (StagedXBlocks)
//     reads the codes alone.
//   - writes_codes, prefill_writes_codes (the norms, attention, last,
//     swiglu_linear): the producer also writes its output's int16 codes,
//     where the output is whole 32-groups that a kernel reading codes
//     reads as its input x (kernel q8 or mma, a q8 MoE), directly or
//     through a last row in place.
//   - batch_decode_writes_codes (a norm before the graph's last node): the
//     same in a batched step of decode tokens alone, whose matrix kernels
//     (batch_decode_kernel q8 or mma_tokens) read codes: no quantize_x8
//     launch before them.
func chooseCodes(g *ir.Graph) error {
	gpu, err := graphGPU(g)
	if err != nil {
		return err
	}
	mt, _ := g.Attrs["max_tokens"].(int64)
	users := users(g)
	for _, n := range g.Nodes {
		delete(n.Attrs, "row_in_place")
		delete(n.Attrs, "writes_codes")
		delete(n.Attrs, "prefill_writes_codes")
		delete(n.Attrs, "batch_decode_writes_codes")
	}
	for _, n := range g.Nodes {
		if n.Op == ir.OpLast && len(g.Outputs) > 0 && n != g.Outputs[0] && gpu.rowInPlace(n, users[n], mt) {
			n.Attrs["row_in_place"] = true
		}
	}
	for _, n := range g.Nodes {
		v, cols := codesOf(n, users)
		if v == nil || cols%32 != 0 {
			continue
		}
		if feedsIntDot(v, users, false) && !n.Bool("row_in_place") { // in place: no launch, x's producer writes them
			n.Attrs["writes_codes"] = true
		}
		if feedsIntDot(v, users, true) {
			n.Attrs["prefill_writes_codes"] = true
		}
	}
	for _, n := range beforeLast(g) {
		switch n.Op {
		case ir.OpRMSNorm, ir.OpLayerNorm, ir.OpAddRMSNorm, ir.OpAddLayerNorm, ir.OpAddPostNorm:
			if v, cols := codesOf(n, users); v != nil && cols%32 == 0 && feedsTokenCodes(v, users) {
				n.Attrs["batch_decode_writes_codes"] = true
			}
		}
	}
	return nil
}

// feedsTokenCodes reports whether a matrix kernel of a batched step of
// decode tokens alone reads v's int16 codes as its input x.
func feedsTokenCodes(v *ir.Node, users map[*ir.Node][]*ir.Node) bool {
	return slices.ContainsFunc(users[v], func(u *ir.Node) bool {
		k := u.Str("batch_decode_kernel")
		return u.Inputs[0] == v && isMatrix(u) && (k == ir.KernelQ8 || k == ir.KernelMMATokens)
	})
}

// codesOf is the value whose int16 codes producer n may write, and its
// width: a norm's normed row, an attention's output where heads are whole
// 32-groups, a last row's or a SwiGLU's output; nil for other nodes.
func codesOf(n *ir.Node, users map[*ir.Node][]*ir.Node) (*ir.Node, int64) {
	width := func(v *ir.Node) int64 { return v.Shape[len(v.Shape)-1] }
	switch n.Op {
	case ir.OpRMSNorm, ir.OpLayerNorm, ir.OpLast, ir.OpSwiGLULinear:
		return n, width(n)
	case ir.OpAddRMSNorm, ir.OpAddLayerNorm, ir.OpAddPostNorm:
		if v := NormedPart(n, users); v != nil {
			return v, width(v)
		}
	case ir.OpAttention:
		if n.Int("head_dim")%32 == 0 {
			return n, width(n)
		}
	}
	return nil, 0
}

// rowInPlace reports whether decode last row n, which readers read, is its
// input x in place (row_in_place; chooseCodes says when).
func (g GPU) rowInPlace(n *ir.Node, readers []*ir.Node, maxTokens int64) bool {
	x := n.Inputs[0]
	xOff, ok := x.Attrs["offset"].(int64)
	if !ok || len(x.Shape) == 0 || x.Shape[0] != ir.T || x.DType != ir.F32 {
		return false
	}
	xEnd := xOff + 4*x.Shape.Elems(maxTokens)
	for _, u := range readers {
		if g.readsOnlyCodes(u) {
			continue
		}
		uOff, ok := u.Attrs["offset"].(int64)
		if !ok || u.DType != ir.F32 || uOff < xEnd && xOff < uOff+4*u.Shape.Elems(maxTokens) {
			return false
		}
	}
	return true
}

// readsOnlyCodes reports whether node u reads its input only as int16
// codes, never the f32 row, in decode: a q8 linear with too many blocks to
// quantize its input itself, as an LM head.
func (g GPU) readsOnlyCodes(u *ir.Node) bool {
	if u.Op != ir.OpLinear || u.Str("kernel") != ir.KernelQ8 || len(u.Shape) != 2 {
		return false
	}
	x := u.Inputs[0]
	_, blocks := g.LinearQ8Blocks(u.Inputs[1].DType, x.Shape[len(x.Shape)-1], u.Shape[1])
	return blocks > g.StagedXBlocks()
}

// LinearQ8Blocks is linear_q8's lane-set size and blocks for an [out, in]
// matrix of dtype dt: each set owns 4 rows (LIN_ROWS).
func (g GPU) LinearQ8Blocks(dt ir.DType, in, out int64) (s, blocks int64) {
	s, sets := g.IntLanes(dt, in, out)
	return s, ceilDiv(out, 4*sets)
}

// StagedXBlocks is the largest grid of a linear_q8 that quantizes its own
// input (stages_x, chooseStaging): three blocks an SM, resident at once, so
// that the redundant quantization costs one block's time.
func (g GPU) StagedXBlocks() int64 { return 3 * g.SMs }

// StagedXBytes limits linear_q8 quantizing its own input (chooseStaging):
// the int16 row and its scales in static shared memory (48 KiB at most),
// and a grid of at most StagedXBlocks, resident at once, so that the
// redundant quantization costs one block's time. GPT-2's Q4_0 down
// projection after its GELU (3072 → 768: 96 blocks, 7 KiB) stages, and
// Phi-3's after its SwiGLU (8192 → 3072: 384 blocks, 18 KiB), whose decode
// step staging took 1 % less than after a quantize_x8 launch (H200).
const StagedXBytes = 40 << 10

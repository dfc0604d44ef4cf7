package cuda

import (
	"fmt"
	"math"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// embed(table, ids): one block per token gathers and dequantizes a row.
func (e *emitter) embed(n *ir.Node) ([]plans.Launch, error) {
	table, ids := n.Inputs[0], n.Inputs[1]
	if len(table.Shape) != 2 {
		return nil, fmt.Errorf("table %q is %v, want [rows, cols]", table.Str("name"), table.Shape)
	}
	acc, err := e.accessor(table)
	if err != nil {
		return nil, err
	}
	if ids.DType != ir.I32 {
		return nil, fmt.Errorf("ids node %d is %s, want i32", ids.ID, ids.DType)
	}
	c := &call{}
	c.ptr(e, cWeight, "table", table)
	c.ptr(e, cInts, "ids", ids)
	c.ptr(e, cOut, "y", n)
	return e.emit(c, "embed_rows", 128, gridRowsX(rowsOf(ids)), embedArgs{W: acc, Rows: table.Shape[0], Cols: table.Shape[1]})
}

// norm: rmsnorm, layernorm and their add_ fusions (add_post_rmsnorm's b
// normed first, by wb); one block per row.
func (e *emitter) norm(n *ir.Node) ([]plans.Launch, error) {
	post := n.Op == ir.OpAddPostNorm
	add := n.Op == ir.OpAddRMSNorm || n.Op == ir.OpAddLayerNorm || post
	layer := n.Op == ir.OpLayerNorm || n.Op == ir.OpAddLayerNorm
	in := n.Inputs
	cols, err := activation(in[0])
	if err != nil {
		return nil, err
	}
	c := &call{}
	c.ptr(e, cIn, "a", in[0])
	if add {
		if bc, err := activation(in[1]); err != nil || bc != cols {
			return nil, fmt.Errorf("add operands differ: %v and %v", in[0].Shape, in[1].Shape)
		}
		c.ptr(e, cIn, "b", in[1])
		in = in[1:]
	} else {
		c.null()
	}
	var wba accessor
	if post {
		if wba, err = e.vectorAccessor(in[1], cols); err != nil {
			return nil, err
		}
		c.ptr(e, cWeight, "wb", in[1])
		in = in[1:]
	}
	wa, err := e.vectorAccessor(in[1], cols)
	if err != nil {
		return nil, err
	}
	c.ptr(e, cWeight, "w", in[1])
	cfg := e.normConfig(n)
	var ba accessor
	if layer {
		if ba, err = e.vectorAccessor(in[2], cols); err != nil {
			return nil, err
		}
		c.ptr(e, cWeight, "bias", in[2])
	}
	out, err := e.value(n)
	if err != nil {
		return nil, err
	}
	normed := n // the node consumers read the normed row through
	if add {
		c.arg(cOut, "s", out)
		out.Offset += 4 * e.maxTokens * cols // part 1: the normed sum
		normed = passes.NormedPart(n, e.users)
	} else {
		c.null()
	}
	if normed != nil && e.foldedNorm(normed) == n {
		return nil, nil // its reader normalizes the row itself
	}
	if m := e.routerOf(n, normed); m != nil {
		return e.normLogits(c, m, normed, cols, add, cfg, wa)
	}
	c.arg(cOut, "y", out)
	q8 := false
	if normed != nil {
		q8 = e.quantizes(c, n, normed, cols)
	} else {
		c.null()
		c.null()
	}
	threads := normThreads(cols)
	g := gridRowsX(rowsOf(n.Inputs[0]))
	if post {
		return e.emit(c, "rmsnorm_post_rows", threads, g, rmsNormPostArgs{N: cfg, WB: wba, W: wa, Cols: cols, Threads: int64(threads), Q8: q8})
	}
	if layer {
		return e.emit(c, "layernorm_rows", threads, g, layerNormArgs{N: cfg, W: wa, B: ba, Cols: cols, Threads: int64(threads), Add: add, Q8: q8})
	}
	return e.emit(c, "rmsnorm_rows", threads, g, rmsNormArgs{N: cfg, W: wa, Cols: cols, Threads: int64(threads), Add: add, Q8: q8})
}

// normConfig is the config struct (norm.cu.tmpl's N) of norm n: its EPS.
func (e *emitter) normConfig(n *ir.Node) string {
	return e.kernels.config("Norm", "static constexpr float EPS = "+cFloat(n.Float("eps"))+";")
}

// normThreads is a norm block's size for rows of cols: whole warps, each
// thread holding a quad of 4 elements of the row in registers (more quads
// past 4096 columns, at most 1024 threads). One row is a decode step's
// latency: few elements per thread keep its loads, reduction and
// quantization short.
func normThreads(cols int64) int {
	per := 4 * ceilDiv(cols, 4096)
	return int(min(1024, ceilDiv(ceilDiv(cols, per), 32)*32))
}

// elementwise: add, swiglu, gelu, split, last.
func (e *emitter) elementwise(n *ir.Node) ([]plans.Launch, error) {
	x := n.Inputs[0]
	cols, err := activation(x)
	if err != nil {
		return nil, err
	}
	rows := rowsOf(x)
	c := &call{}
	switch n.Op {
	case ir.OpAdd:
		if bc, err := activation(n.Inputs[1]); err != nil || bc != cols {
			return nil, fmt.Errorf("add operands differ: %v and %v", x.Shape, n.Inputs[1].Shape)
		}
		c.ptr(e, cIn, "a", x)
		c.ptr(e, cIn, "b", n.Inputs[1])
		c.ptr(e, cOut, "y", n)
		e.stateArg(c)
		return e.emit(c, "add_ew", 256, gridElems(rows, cols, 256), rowsColsArgs{rows, cols})
	case ir.OpSwiGLU:
		f, stride := cols, cols
		c.ptr(e, cIn, "g", x)
		if len(n.Inputs) == 2 {
			if uc, err := activation(n.Inputs[1]); err != nil || uc != cols {
				return nil, fmt.Errorf("swiglu operands differ: %v and %v", x.Shape, n.Inputs[1].Shape)
			}
			c.ptr(e, cIn, "u", n.Inputs[1])
		} else {
			if cols%2 != 0 {
				return nil, fmt.Errorf("packed swiglu input has an odd width %d", cols)
			}
			f = cols / 2
			c.args = append(c.args, fmt.Sprintf("g + %d", f))
		}
		c.ptr(e, cOut, "y", n)
		e.stateArg(c)
		return e.emit(c, "swiglu_ew", 256, gridElems(rows, f, 256), swigluEWArgs{Rows: rows, F: f, InStride: stride})
	case ir.OpGELU:
		c.ptr(e, cIn, "x", x)
		c.ptr(e, cOut, "y", n)
		e.stateArg(c)
		return e.emit(c, "gelu_ew", 256, gridElems(rows, cols, 256), rowsColsArgs{rows, cols})
	case ir.OpLast:
		if e.lastIsRow(n) {
			return nil, nil // value(n) is x's
		}
		c.ptr(e, cIn, "x", x)
		c.ptr(e, cOut, "y", n)
		q8 := e.quantizes(c, n, n, cols)
		e.stateArg(c)
		return e.emit(c, "last_row", 256, gridFixed(ceilDiv(cols, 256)), lastRowArgs{Rows: rows, Cols: cols, Q8: q8})
	}
	return e.split(n, cols)
}

// lastIsRow reports whether last-row node n needs no launch in the
// schedule being emitted: in decode, where the chooseCodes pass found the
// last row of x [T, cols] to be x in place (row_in_place), n's readers read
// x itself (value), its producer writing its codes for them.
func (e *emitter) lastIsRow(n *ir.Node) bool { return !e.prefill && n.Bool("row_in_place") }

// split: one copy launch per part of the packed result.
func (e *emitter) split(n *ir.Node, cols int64) ([]plans.Launch, error) {
	var sum int64
	for _, p := range n.Ints("parts") {
		sum += p
	}
	if sum != cols {
		return nil, fmt.Errorf("parts %v do not add up to the input width %d", n.Ints("parts"), cols)
	}
	out, err := e.value(n)
	if err != nil {
		return nil, err
	}
	var ls []plans.Launch
	var c0 int64
	for _, p := range n.Ints("parts") {
		c := &call{}
		c.ptr(e, cIn, "x", n.Inputs[0])
		part := out
		part.Offset += 4 * e.maxTokens * c0
		c.arg(cOut, "y", part)
		e.stateArg(c)
		l, err := e.emit(c, "split_ew", 256, gridElems(rowsOf(n.Inputs[0]), p, 256), splitEWArgs{Rows: rowsOf(n.Inputs[0]), In: cols, C0: c0, N: p})
		if err != nil {
			return nil, err
		}
		ls = append(ls, l...)
		c0 += p
	}
	return ls, nil
}

// rope(x, positions): one thread per rotation pair.
func (e *emitter) rope(n *ir.Node) ([]plans.Launch, error) {
	cols, err := activation(n.Inputs[0])
	if err != nil {
		return nil, err
	}
	heads, hd := n.Int("heads"), n.Int("head_dim")
	if heads*hd != cols {
		return nil, fmt.Errorf("heads %d · head_dim %d is not the width %d", heads, hd, cols)
	}
	r, err := e.ropeConfig(n, n.Str("mode"))
	if err != nil {
		return nil, err
	}
	c := &call{}
	c.ptr(e, cIn, "x", n.Inputs[0])
	c.ptr(e, cInts, "positions", n.Inputs[1])
	c.ptr(e, cOut, "y", n)
	e.stateArg(c)
	return e.emit(c, "rope_rows", 256, gridElems(rowsOf(n.Inputs[0]), cols/2, 256), ropeArgs{R: r, Rows: rowsOf(n.Inputs[0]), Heads: heads})
}

// ropeConfig emits the rope struct of rope-carrying node n.
func (e *emitter) ropeConfig(n *ir.Node, mode string) (string, error) {
	modes := map[string]int{"normal": 1, "neox": 2}
	m, ok := modes[mode]
	if !ok {
		return "", fmt.Errorf("rope mode %q is neither normal nor neox", mode)
	}
	hd, rot, base := n.Int("head_dim"), n.Int("rot_dim"), n.Float("base")
	if rot == 0 {
		rot = hd
	}
	if hd < 2 || hd%2 != 0 || rot%2 != 0 || rot > hd || !(base > 0) {
		return "", fmt.Errorf("rope head_dim %d, rot_dim %d, base %v out of range", hd, rot, base)
	}
	members := []string{
		fmt.Sprintf("static constexpr int MODE = %d, HD = %d, ROT = %d;", m, hd, rot),
		"static constexpr float BASE = " + cFloat(base) + ";",
	}
	if f := n.Float("yarn_factor"); f > 0 {
		c0, c1 := yarnCorrDims(rot, n.Int("yarn_orig_ctx"), base, n.Float("yarn_beta_fast"), n.Float("yarn_beta_slow"))
		members = append(members, "static constexpr bool YARN = true;",
			fmt.Sprintf("static constexpr float FREQ_SCALE = %s, CORR0 = %s, CORR1 = %s, MSCALE = %s;",
				cFloat(1/f), cFloat(c0), cFloat(c1), cFloat(1+0.1*math.Log(f))))
	} else {
		members = append(members, "static constexpr bool YARN = false;")
	}
	scaled, err := e.ropeScaled(n)
	if err != nil {
		return "", err
	}
	return e.kernels.config("Rope", append(members, scaled...)...), nil
}

// yarnCorrDims are the pair indexes between which YaRN ramps from
// interpolation to extrapolation, as transformers' _compute_yarn_parameters
// with truncate=false (gpt-oss's setting, and the CPU device's): not rounded
// outward as ggml_rope_yarn_corr_dims rounds them.
func yarnCorrDims(nDims, origCtx int64, base, betaFast, betaSlow float64) (float64, float64) {
	dim := func(nRot float64) float64 {
		return float64(nDims) * math.Log(float64(origCtx)/(nRot*2*math.Pi)) / (2 * math.Log(base))
	}
	return max(0, dim(betaFast)), min(float64(nDims-1), dim(betaSlow))
}

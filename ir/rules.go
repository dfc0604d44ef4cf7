package ir

import (
	"errors"
	"fmt"
)

// attrKinds are the Go types of the well-known node attributes; Verify
// rejects a node whose attribute has another type, so passes and backends
// can read them with Int/Float/Str/Ints without guessing.
var attrKinds = kindsOf(map[string][]string{
	"string": {"name", "layout", "mode", "rope_mode", "act", kvCache},
	"float64": {"eps", "base", "scale", "limit", "alpha", "yarn_factor", "yarn_beta_fast", "yarn_beta_slow",
		"factor", "freq_scale"},
	"int64": {"heads", "kv_heads", "head_dim", "rot_dim", "layer", "window", "experts", "top_k",
		"part", "offset", "yarn_orig_ctx", "decode_splits", "decode_cluster", "decode_stages", "decode_min_keys",
		"paged_stages", "paged_splits", "paged_split_tiles", "moe_tile_m", "moe_tile_n", "moe_stages", "moe_down_rows", "moe_down_lanes", "gemm_tile_m", "gemm_tile_n", "gemm_splits", "gemm_stages"},
	"[]int64":   {"parts", "rows"},
	"[]float64": {"freq_factors"},
})

func kindsOf(byKind map[string][]string) map[string]string {
	m := map[string]string{}
	for kind, keys := range byKind {
		for _, k := range keys {
			m[k] = kind
		}
	}
	return m
}

// graphAttrKinds are the Go types of the graph attributes that passes read.
var graphAttrKinds = map[string]string{
	"max_tokens": "int64", "arena_bytes": "int64", "peak_bytes": "int64", "ctx": "int64",
}

// blockElems is the number of elements per quant block; a quantized weight's
// rows (its last dimension) must be a whole number of blocks.
var blockElems = map[DType]int64{
	Q4_0: 32, Q5_0: 32, Q8_0: 32, MXFP4: 32, Q4_K: 256, Q5_K: 256, Q6_K: 256,
}

// BlockElems returns the elements per block of a quantized dtype (1 for
// plain types).
func BlockElems(d DType) int64 {
	if b, ok := blockElems[d]; ok {
		return b
	}
	return 1
}

// shapeRules checks each op's input dtypes and shapes, attribute values and
// its own result type. The op table has checked counts and presence.
var shapeRules = map[Op]func(n *Node) error{
	OpInput:        ruleInput,
	OpWeight:       ruleWeight,
	OpEmbed:        ruleEmbed,
	OpAdd:          ruleAdd,
	OpRMSNorm:      ruleNorm,
	OpLayerNorm:    ruleNorm,
	OpLinear:       ruleLinear,
	OpRoPE:         ruleRoPE,
	OpHeadRMSNorm:  ruleHeadRMSNorm,
	OpGEGLU:        ruleSwiGLU,
	OpScale:        ruleGELU,
	OpNormRoPE:     ruleHeadRMSNorm,
	OpAttention:    ruleAttention,
	OpSwiGLU:       ruleSwiGLU,
	OpGELU:         ruleGELU,
	OpLast:         ruleLast,
	OpMoE:          ruleMoE,
	OpView:         ruleView,
	OpSplit:        ruleSplit,
	OpQKV:          ruleQKV,
	OpSwiGLULinear: ruleSwiGLULinear,
	OpAddRMSNorm:   ruleAddNorm,
	OpAddPostNorm:  ruleAddPostNorm,
	OpAddLayerNorm: ruleAddNorm,
}

// result checks the node's own dtype and shape.
func result(n *Node, dt DType, shape Shape) error {
	if n.DType != dt || !n.Shape.Equal(shape) {
		return fmt.Errorf("result %s%v, want %s%v", n.DType, n.Shape, dt, shape)
	}
	return nil
}

// activation checks that input i is an f32 matrix and returns its rows, cols.
func activation(n *Node, i int, what string) (rows, cols int64, err error) {
	x := n.Inputs[i]
	if x.DType != F32 || len(x.Shape) != 2 {
		return 0, 0, fmt.Errorf("%s (%%%d) is %s%v, want an f32 matrix", what, x.ID, x.DType, x.Shape)
	}
	return x.Shape[0], x.Shape[1], nil
}

// positions checks that input i is i32[rows].
func positions(n *Node, i int, rows int64) error {
	p := n.Inputs[i]
	if p.DType != I32 || !p.Shape.Equal(Shape{rows}) {
		return fmt.Errorf("positions (%%%d) is %s%v, want i32[%v]", p.ID, p.DType, p.Shape, dimString(rows))
	}
	return nil
}

// vector checks that input i is a float vector of length c (norm weights,
// biases, sinks).
func vector(n *Node, i int, c int64, what string) error {
	v := n.Inputs[i]
	if v.DType.Quantized() || v.DType == I32 || v.DType == None || !v.Shape.Equal(Shape{c}) {
		return fmt.Errorf("%s (%%%d) is %s%v, want a float vector [%d]", what, v.ID, v.DType, v.Shape, c)
	}
	return nil
}

// matrix checks that input i is a weight [out, in] and returns out.
func matrix(n *Node, i int, in int64, what string) (out int64, err error) {
	w := n.Inputs[i]
	if len(w.Shape) != 2 || w.Shape[0] == T || w.DType == I32 || w.DType == None {
		return 0, fmt.Errorf("%s (%%%d) is %s%v, want a weight matrix [out, in]", what, w.ID, w.DType, w.Shape)
	}
	if w.Shape[1] != in {
		return 0, fmt.Errorf("%s (%%%d) in-dim %d ≠ input cols %d", what, w.ID, w.Shape[1], in)
	}
	return w.Shape[0], nil
}

func dimString(d int64) string {
	if d == T {
		return "T"
	}
	return fmt.Sprint(d)
}

func positive(n *Node, keys ...string) error {
	for _, k := range keys {
		if n.Int(k) <= 0 {
			return fmt.Errorf("attr %s = %d, want > 0", k, n.Int(k))
		}
	}
	return nil
}

func ruleInput(n *Node) error {
	if name := n.Str("name"); name != "tokens" && name != "positions" {
		return fmt.Errorf("input name %q, want tokens or positions", name)
	}
	return result(n, I32, Shape{T})
}

func ruleWeight(n *Node) error {
	if n.Str("name") == "" {
		return errors.New("empty weight name")
	}
	if n.DType == None || n.DType == I32 || len(n.Shape) == 0 {
		return fmt.Errorf("weight is %s%v, want a float or quantized tensor", n.DType, n.Shape)
	}
	if n.Shape[0] == T {
		return errors.New("a weight has no token dimension")
	}
	if b := BlockElems(n.DType); n.Shape[len(n.Shape)-1]%b != 0 {
		return fmt.Errorf("row length %d is not a multiple of the %s block %d", n.Shape[len(n.Shape)-1], n.DType, b)
	}
	if _, ok := n.Attrs["rows"]; ok {
		return checkRowRange(n)
	}
	return nil
}

// checkRowRange checks a weight's rows=[first, count] against its shape.
// Whether first+count fits the stored tensor is the plan's to check: the IR
// does not know the tensor's full size.
func checkRowRange(n *Node) error {
	r := n.Ints("rows")
	if len(r) != 2 || r[0] < 0 || r[1] < 1 {
		return fmt.Errorf("rows %v, want [first ≥ 0, count ≥ 1]", r)
	}
	if r[1] != n.Shape[0] {
		return fmt.Errorf("rows %v: count %d ≠ the weight's first dimension %d", r, r[1], n.Shape[0])
	}
	if len(n.Shape) == 1 && n.DType.Quantized() {
		return fmt.Errorf("rows %v of a %s vector would cut quant blocks", r, n.DType)
	}
	return nil
}

func ruleEmbed(n *Node) error {
	table, ids := n.Inputs[0], n.Inputs[1]
	if len(table.Shape) != 2 || table.Shape[0] == T {
		return fmt.Errorf("table (%%%d) is %v, want [rows, cols]", table.ID, table.Shape)
	}
	if ids.DType != I32 || len(ids.Shape) != 1 {
		return fmt.Errorf("ids (%%%d) is %s%v, want i32[T]", ids.ID, ids.DType, ids.Shape)
	}
	return result(n, F32, Shape{ids.Shape[0], table.Shape[1]})
}

func ruleAdd(n *Node) error {
	a, b := n.Inputs[0], n.Inputs[1]
	if a.DType != F32 || b.DType != F32 || !a.Shape.Equal(b.Shape) {
		return fmt.Errorf("operands %s%v and %s%v, want equal f32 shapes", a.DType, a.Shape, b.DType, b.Shape)
	}
	return result(n, F32, a.Shape)
}

// ruleNorm covers rmsnorm(x, w) and layernorm(x, w, b).
func ruleNorm(n *Node) error {
	rows, cols, err := activation(n, 0, "x")
	if err != nil {
		return err
	}
	if err := checkNormParams(n, 1, cols); err != nil {
		return err
	}
	return result(n, F32, Shape{rows, cols})
}

// checkNormParams checks the weight (and LayerNorm bias) from input i on,
// and eps.
func checkNormParams(n *Node, i int, cols int64) error {
	if err := vector(n, i, cols, "norm weight"); err != nil {
		return err
	}
	if i+1 < len(n.Inputs) {
		if err := vector(n, i+1, cols, "norm bias"); err != nil {
			return err
		}
	}
	if n.Float("eps") < 0 {
		return fmt.Errorf("eps %g < 0", n.Float("eps"))
	}
	return nil
}

func ruleLinear(n *Node) error {
	rows, in, err := activation(n, 0, "x")
	if err != nil {
		return err
	}
	out, err := matrix(n, 1, in, "weight")
	if err != nil {
		return err
	}
	if len(n.Inputs) == 3 {
		if err := vector(n, 2, out, "bias"); err != nil {
			return err
		}
	}
	return result(n, F32, Shape{rows, out})
}

// checkRoPEAttrs checks the rotation attributes shared by rope and a qkv
// with folded RoPE; modeKey is "mode" or "rope_mode".
func checkRoPEAttrs(n *Node, modeKey string) error {
	if err := positive(n, "heads", "head_dim", "rot_dim"); err != nil {
		return err
	}
	if m := n.Str(modeKey); m != "normal" && m != "neox" {
		return fmt.Errorf("attr %s %q, want normal or neox", modeKey, m)
	}
	if rd := n.Int("rot_dim"); rd > n.Int("head_dim") || rd%2 != 0 {
		return fmt.Errorf("rot_dim %d must be even and ≤ head_dim %d", rd, n.Int("head_dim"))
	}
	if n.Float("base") <= 0 {
		return fmt.Errorf("base %g ≤ 0", n.Float("base"))
	}
	if s, ok := n.Attrs["freq_scale"]; ok && !(s.(float64) > 0) {
		return fmt.Errorf("freq_scale %g ≤ 0", s)
	}
	if f, ok := n.Attrs["freq_factors"]; ok {
		ff := f.([]float64)
		if int64(len(ff)) != n.Int("rot_dim")/2 {
			return fmt.Errorf("%d freq_factors, want rot_dim/2 = %d", len(ff), n.Int("rot_dim")/2)
		}
		for _, v := range ff {
			if !(v > 0) {
				return fmt.Errorf("freq_factors hold %g, want positive divisors", v)
			}
		}
	}
	return nil
}

func ruleRoPE(n *Node) error {
	rows, cols, err := activation(n, 0, "x")
	if err != nil {
		return err
	}
	if err := checkRoPEAttrs(n, "mode"); err != nil {
		return err
	}
	if hd := n.Int("heads") * n.Int("head_dim"); cols != hd {
		return fmt.Errorf("x cols %d ≠ heads·head_dim %d", cols, hd)
	}
	if err := positions(n, 1, rows); err != nil {
		return err
	}
	return result(n, F32, Shape{rows, cols})
}

// ruleHeadRMSNorm: head_rmsnorm(x, w), x [rows, heads·head_dim], w
// [head_dim]; with rope's attributes and positions, norm_rope(x, w,
// positions).
func ruleHeadRMSNorm(n *Node) error {
	rows, cols, err := activation(n, 0, "x")
	if err != nil {
		return err
	}
	if err := positive(n, "heads", "head_dim"); err != nil {
		return err
	}
	if hd := n.Int("heads") * n.Int("head_dim"); cols != hd {
		return fmt.Errorf("x cols %d ≠ heads·head_dim %d", cols, hd)
	}
	if err := vector(n, 1, n.Int("head_dim"), "norm weight"); err != nil {
		return err
	}
	if n.Float("eps") < 0 {
		return fmt.Errorf("eps %g < 0", n.Float("eps"))
	}
	if n.Op == OpNormRoPE {
		if err := checkRoPEAttrs(n, "mode"); err != nil {
			return err
		}
		if err := positions(n, 2, rows); err != nil {
			return err
		}
	}
	return result(n, F32, Shape{rows, cols})
}

func ruleAttention(n *Node) error {
	if err := positive(n, "heads", "kv_heads", "head_dim"); err != nil {
		return err
	}
	heads, kvHeads, hd := n.Int("heads"), n.Int("kv_heads"), n.Int("head_dim")
	if heads%kvHeads != 0 {
		return fmt.Errorf("heads %d not a multiple of kv_heads %d", heads, kvHeads)
	}
	if n.Int("layer") < 0 || n.Int("window") < 0 {
		return fmt.Errorf("layer %d and window %d must be ≥ 0", n.Int("layer"), n.Int("window"))
	}
	rows, qCols, err := activation(n, 0, "q")
	if err != nil {
		return err
	}
	if qCols != heads*hd {
		return fmt.Errorf("q cols %d ≠ heads·head_dim %d", qCols, heads*hd)
	}
	for i, what := range []string{"k", "v"} {
		r, c, err := activation(n, 1+i, what)
		if err != nil {
			return err
		}
		if r != rows || c != kvHeads*hd {
			return fmt.Errorf("%s is [%s,%d], want [%s,%d] (kv_heads·head_dim)", what, dimString(r), c, dimString(rows), kvHeads*hd)
		}
	}
	if len(n.Inputs) == 4 {
		if err := vector(n, 3, heads, "sinks"); err != nil {
			return err
		}
	}
	return result(n, F32, Shape{rows, heads * hd})
}

func ruleSwiGLU(n *Node) error {
	rows, cols, err := activation(n, 0, "gate")
	if err != nil {
		return err
	}
	if len(n.Inputs) == 1 {
		if cols%2 != 0 {
			return fmt.Errorf("packed gate·up has odd width %d", cols)
		}
		return result(n, F32, Shape{rows, cols / 2})
	}
	ur, uc, err := activation(n, 1, "up")
	if err != nil {
		return err
	}
	if ur != rows || uc != cols {
		return fmt.Errorf("gate [%s,%d] and up [%s,%d] differ", dimString(rows), cols, dimString(ur), uc)
	}
	return result(n, F32, Shape{rows, cols})
}

func ruleGELU(n *Node) error {
	rows, cols, err := activation(n, 0, "x")
	if err != nil {
		return err
	}
	return result(n, F32, Shape{rows, cols})
}

func ruleLast(n *Node) error {
	_, cols, err := activation(n, 0, "x")
	if err != nil {
		return err
	}
	return result(n, F32, Shape{1, cols})
}

func ruleMoE(n *Node) error {
	rows, d, err := activation(n, 0, "x")
	if err != nil {
		return err
	}
	if err := positive(n, "experts", "top_k"); err != nil {
		return err
	}
	e, k := n.Int("experts"), n.Int("top_k")
	if k > e {
		return fmt.Errorf("top_k %d > experts %d", k, e)
	}
	if len(n.Inputs) != 5 && len(n.Inputs) != 9 {
		return fmt.Errorf("%d inputs, want x and 4 weights, or x and 4 weight-bias pairs", len(n.Inputs))
	}
	_, limit := n.Attrs["limit"]
	if _, alpha := n.Attrs["alpha"]; limit != alpha {
		return errors.New("limit and alpha come together (gpt-oss's clamped SwiGLU) or not at all")
	}
	w := MoEInputs(n)
	ff := w.Gate.Shape // gate_w [E, F, D]
	if len(ff) != 3 {
		return fmt.Errorf("gate_w (%%%d) is %v, want [experts, ff, d]", w.Gate.ID, ff)
	}
	f := ff[1]
	want := []struct {
		in    *Node
		shape Shape
		what  string
	}{
		{w.Router, Shape{e, d}, "router_w"}, {w.RouterBias, Shape{e}, "router_b"},
		{w.Gate, Shape{e, f, d}, "gate_w"}, {w.GateBias, Shape{e, f}, "gate_b"},
		{w.Up, Shape{e, f, d}, "up_w"}, {w.UpBias, Shape{e, f}, "up_b"},
		{w.Down, Shape{e, d, f}, "down_w"}, {w.DownBias, Shape{e, d}, "down_b"},
	}
	for _, c := range want {
		if c.in == nil {
			continue
		}
		if !c.in.Shape.Equal(c.shape) || c.in.DType == I32 || c.in.DType == None {
			return fmt.Errorf("%s (%%%d) is %s%v, want %v", c.what, c.in.ID, c.in.DType, c.in.Shape, c.shape)
		}
	}
	return result(n, F32, Shape{rows, d})
}

func ruleView(n *Node) error {
	x := n.Inputs[0]
	if !Ops[x.Op].Packed {
		return fmt.Errorf("views %%%d (%s), which is not packed", x.ID, x.Op)
	}
	parts, part := x.Ints("parts"), n.Int("part")
	if part < 0 || part >= int64(len(parts)) {
		return fmt.Errorf("part %d out of range of %d parts", part, len(parts))
	}
	return result(n, F32, Shape{x.Shape[0], parts[part]})
}

// ruleSplit: the parts (checked to sum to the result's columns) cut x's
// columns, so x has exactly that many.
func ruleSplit(n *Node) error {
	rows, cols, err := activation(n, 0, "x")
	if err != nil {
		return err
	}
	return result(n, F32, Shape{rows, cols})
}

// ruleQKV accepts qkv(x, wq, wk, wv [, bq, bk, bv] [, positions]); the
// positions input is there exactly when RoPE is folded in (attr rope_mode).
func ruleQKV(n *Node) error {
	rows, in, err := activation(n, 0, "x")
	if err != nil {
		return err
	}
	_, roped := n.Attrs["rope_mode"]
	nBias := len(n.Inputs) - 4
	if roped {
		nBias--
	}
	if nBias != 0 && nBias != 3 {
		return fmt.Errorf("%d inputs: want x, wq, wk, wv, then 3 biases or none, then positions iff rope_mode is set", len(n.Inputs))
	}
	var outs [3]int64
	for i, what := range []string{"wq", "wk", "wv"} {
		if outs[i], err = matrix(n, 1+i, in, what); err != nil {
			return err
		}
		if nBias == 3 {
			if err := vector(n, 4+i, outs[i], "bias of "+what); err != nil {
				return err
			}
		}
	}
	if parts := n.Ints("parts"); !Shape(parts).Equal(outs[:]) {
		return fmt.Errorf("parts %v ≠ projection widths %v", parts, outs)
	}
	if roped {
		if err := checkRoPEAttrs(n, "rope_mode"); err != nil {
			return err
		}
		if err := positive(n, "kv_heads"); err != nil {
			return err
		}
		hd := n.Int("head_dim")
		if outs[0] != n.Int("heads")*hd || outs[1] != n.Int("kv_heads")*hd {
			return fmt.Errorf("q, k widths %d, %d ≠ heads·head_dim %d, kv_heads·head_dim %d",
				outs[0], outs[1], n.Int("heads")*hd, n.Int("kv_heads")*hd)
		}
		if err := positions(n, len(n.Inputs)-1, rows); err != nil {
			return err
		}
	}
	return result(n, F32, Shape{rows, outs[0] + outs[1] + outs[2]})
}

func ruleSwiGLULinear(n *Node) error {
	rows, in, err := activation(n, 0, "x")
	if err != nil {
		return err
	}
	if a, ok := n.Attrs["act"]; ok && a != string(GateGELUTanh) {
		return fmt.Errorf("attr act %q, want %s (absent: silu)", a, GateGELUTanh)
	}
	if len(n.Inputs) == 2 {
		out, err := matrix(n, 1, in, "gate·up weight")
		if err != nil {
			return err
		}
		if out%2 != 0 {
			return fmt.Errorf("packed gate·up weight has odd out-dim %d", out)
		}
		return result(n, F32, Shape{rows, out / 2})
	}
	fg, err := matrix(n, 1, in, "gate weight")
	if err != nil {
		return err
	}
	fu, err := matrix(n, 2, in, "up weight")
	if err != nil {
		return err
	}
	if fg != fu {
		return fmt.Errorf("gate out-dim %d ≠ up out-dim %d", fg, fu)
	}
	return result(n, F32, Shape{rows, fg})
}

// ruleAddPostNorm is add_post_rmsnorm(a, b, wb, w): add_rmsnorm's rule,
// and b's norm weight wb of the same width.
func ruleAddPostNorm(n *Node) error {
	cols, err := addNorm(n, 3)
	if err != nil {
		return err
	}
	return vector(n, 2, cols, "post-norm weight")
}

// ruleAddNorm covers add_rmsnorm(a, b, w) and add_layernorm(a, b, w, bias).
func ruleAddNorm(n *Node) error {
	_, err := addNorm(n, 2)
	return err
}

// addNorm checks an add-and-norm of a, b whose norm weight (then bias) is
// input w, and returns the row width.
func addNorm(n *Node, w int) (int64, error) {
	rows, cols, err := activation(n, 0, "a")
	if err != nil {
		return 0, err
	}
	br, bc, err := activation(n, 1, "b")
	if err != nil {
		return 0, err
	}
	if br != rows || bc != cols {
		return 0, fmt.Errorf("operands [%s,%d] and [%s,%d] differ", dimString(rows), cols, dimString(br), bc)
	}
	if err := checkNormParams(n, w, cols); err != nil {
		return 0, err
	}
	if parts := n.Ints("parts"); !Shape(parts).Equal(Shape{cols, cols}) {
		return 0, fmt.Errorf("parts %v, want [%d,%d] (sum, normed)", parts, cols, cols)
	}
	return cols, result(n, F32, Shape{rows, 2 * cols})
}

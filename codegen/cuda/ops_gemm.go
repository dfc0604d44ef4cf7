package cuda

import (
	"fmt"
	"slices"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// The prefill's matrix products run on tensor cores (templates/gemm.cu.tmpl):
// a CTA dequantizes a weight tile once and uses it for 64 or 128 tokens, where
// the decode kernels' token tile of prefillTile reads the weights T/8 times
// and multiplies in fp32 or dp4a.
// gemmThreads is GEMM_THREADS: 8 warps.
const gemmThreads = 256

// gemmTilesOf is matrix node n's GEMM tiles as the chooseGEMMTiles pass
// recorded them, of a product of rows weight rows over in elements;
// it refuses none, or splits that leave a CTA no K-step.
func gemmTilesOf(n *ir.Node, rows, in int64) (passes.GEMMTiles, error) {
	if _, ok := n.Attrs["gemm_tile_m"]; !ok {
		return passes.GEMMTiles{}, fmt.Errorf("%s %%%d has no GEMM tiles (gemm_tile_m, ...): the GPU passes choose them (chooseGEMMTiles)", n.Op, n.ID)
	}
	t := passes.GEMMTiles{M: n.Int("gemm_tile_m"), N: n.Int("gemm_tile_n"), Splits: n.Int("gemm_splits"), Stages: n.Int("gemm_stages")}
	if rows != passes.GEMMRows(n) {
		return t, fmt.Errorf("GEMM tiles recorded for %d weight rows, the product has %d", passes.GEMMRows(n), rows)
	}
	if t.Splits > ceilDiv(in, passes.GEMMStep) {
		return t, fmt.Errorf("gemm_splits %d: more than the %d K-steps of a %d-wide product", t.Splits, ceilDiv(in, passes.GEMMStep), in)
	}
	return t, nil
}

// gemmSplitArea is the arena the split GEMMs share after the prefill
// attentions': the partial tiles of the one that leaves the most (a split
// of a tile, BM·BN floats, at max_tokens), and one arrival counter a tile,
// zero between launches (the arena starts zeroed and a tile's merging CTA
// resets its counter).
type gemmSplitArea struct{ part, counters, end int64 }

func newGEMMSplitArea(g *ir.Graph, maxTokens, base int64) gemmSplitArea {
	var part, counters int64
	for _, n := range g.Nodes {
		if n.Int("gemm_splits") < 2 {
			continue
		}
		t := passes.GEMMTiles{M: n.Int("gemm_tile_m"), N: n.Int("gemm_tile_n"), Splits: n.Int("gemm_splits")}
		tiles := gemmTileCount(t, passes.GEMMRows(n), maxTokens)
		part, counters = max(part, tiles*t.Splits*t.M*t.N*4), max(counters, tiles*4)
	}
	cnt := base + alignUp(part, plans.Alignment)
	return gemmSplitArea{part: base, counters: cnt, end: cnt + alignUp(counters, plans.Alignment)}
}

// gemmTileCount is the output tiles of tiles t over rows weight rows at
// tokens tokens: the grid's x·y.
func gemmTileCount(t passes.GEMMTiles, rows, tokens int64) int64 {
	return ceilDiv(rows, t.N) * ceilDiv(tokens, t.M)
}

// gemmGrid is (ceil(rows/N), ceil(T/M), Splits).
func gemmGrid(rows int64, t passes.GEMMTiles) grid {
	g := gridTokenTiles(ceilDiv(rows, t.N), 0, t.M)
	g.b[2] = t.Splits
	return g
}

// gemmX adds the GEMM's f16 x parameter to c: the scratch after the planned
// arena, and returns the gemm_x_f16 launch converting x [T, in] into it.
// It overwrites what the scratch held.
func (e *emitter) gemmX(c *call, x *ir.Node, in int64) ([]plans.Launch, error) {
	xh := plans.Arg{Kind: plans.ArgArena, Offset: e.scratchBase}
	e.scratchBytes = max(e.scratchBytes, alignUp(e.maxTokens*in*2, plans.Alignment))
	e.scratchHolds = scratchNone
	c.arg("const __half* __restrict__", "x", xh)
	return e.xToF16(x, in, xh)
}

// xToF16 is the gemm_x_f16 launch writing x [T, in] as f16 to xh.
func (e *emitter) xToF16(x *ir.Node, in int64, xh plans.Arg) ([]plans.Launch, error) {
	cv := &call{}
	cv.ptr(e, cIn, "x", x)
	cv.arg("__half* __restrict__", "xh", xh)
	e.stateArg(cv)
	return e.emit(cv, "gemm_x_f16", 256, gridElems(0, in/4, 256), gemmXArgs{in})
}

// emitGEMM emits GEMM kernel fn of node n over rows weight rows: x [T, in]
// converted to f16 (gemmX), the output y, the split partials and counters
// (nullptr unsplit) and the step state after c's weights, in the tiles the
// chooseGEMMTiles pass recorded; targs are its template arguments given
// the tiles (passes.GEMMTiles; Splits 0 unsplit: the template's default 1).
// Its CTAs take passes.GEMMPipeSmem of dynamic shared memory.
func (e *emitter) emitGEMM(c *call, n *ir.Node, in, rows int64, fn string, targs func(t passes.GEMMTiles) any) ([]plans.Launch, error) {
	t, err := gemmTilesOf(n, rows, in)
	if err != nil {
		return nil, err
	}
	conv, err := e.gemmX(c, n.Inputs[0], in)
	if err != nil {
		return nil, err
	}
	c.ptr(e, cOut, "y", n)
	ta := t
	ta.Splits = 0
	if t.Splits > 1 {
		ta.Splits = t.Splits
		c.arg(cOut, "part", plans.Arg{Kind: plans.ArgArena, Offset: e.gemmSplit.part})
		c.arg("int* __restrict__", "counters", plans.Arg{Kind: plans.ArgArena, Offset: e.gemmSplit.counters})
	} else {
		c.null()
		c.null()
	}
	e.stateArg(c)
	ls, err := e.emitBounded(c, fn, gemmThreads, int(passes.GEMMBlocks(t.M)), gemmGrid(rows, t), targs(ta))
	if err != nil {
		return nil, err
	}
	ls[0].Smem = int(passes.GEMMPipeSmem(t.M, t.N, t.Stages))
	return append(conv, ls...), nil
}

// gemmQKV: qkv(x, wq, wk, wv [, bq, bk, bv] [, positions]) as gemm_qkv (c
// holds the weights, qkv's), then qkv_rope_store when q and k rotate or k
// and v go to the cache.
func (e *emitter) gemmQKV(c *call, n *ir.Node, in int64, q qkvParts, bAccs []accessor) ([]plans.Launch, error) {
	rows := q.outs[0] + q.outs[1] + q.outs[2]
	ls, err := e.emitGEMM(c, n, in, rows, "gemm_qkv", func(t passes.GEMMTiles) any {
		return gemmQKVArgs{WQ: q.accs[0], WK: q.accs[1], WV: q.accs[2], BQ: bAccs[0], BK: bAccs[1], BV: bAccs[2],
			In: in, NQ: q.outs[0], NK: q.outs[1], NV: q.outs[2], BM: t.M, BN: t.N, Stages: t.Stages, Splits: t.Splits}
	})
	if err != nil {
		return nil, err
	}
	att := e.storesKVOf(n)
	kv := att != nil
	if q.rope == "Rope_none" && !kv {
		return ls, nil
	}
	s := &call{}
	s.arg(cInts, "positions", plans.Arg{Kind: plans.ArgState, Offset: e.state.Positions})
	s.ptr(e, cOut, "y", n)
	if kv {
		kc, vc := kvArgs(att)
		s.arg(cCache, "kc", kc)
		s.arg(cCache, "vc", vc)
	} else {
		s.null()
		s.null()
	}
	e.stateArg(s)
	rs, err := e.emit(s, "qkv_rope_store", 256, gridElems(0, rows/2, 256), qkvRopeStoreArgs{R: q.rope, NQ: q.outs[0], NK: q.outs[1], NV: q.outs[2], KV: kv})
	return append(ls, rs...), err
}

// qkvParts is what a qkv node's inputs and attributes say: each weight's
// accessor and rows, the optional biases, and the rope config (Rope_none
// without rope_mode).
type qkvParts struct {
	accs   []accessor
	outs   []int64
	biases []*ir.Node
	rope   string
}

// qkvInputs checks qkv node n's inputs after x (of width in): three weights,
// then three biases and/or positions, the parts matching the weights, and
// with rope_mode a positions input and heads·head_dim rows.
func (e *emitter) qkvInputs(n *ir.Node, in int64) (qkvParts, error) {
	var q qkvParts
	rest := n.Inputs[4:]
	if len(rest) >= 3 && rest[0].Op == ir.OpWeight {
		q.biases, rest = rest[:3], rest[3:]
	}
	var positions *ir.Node
	if len(rest) == 1 && rest[0].Op == ir.OpInput {
		positions, rest = rest[0], nil
	}
	if len(rest) != 0 {
		return q, fmt.Errorf("inputs after the weights must be three biases and/or positions")
	}
	for _, w := range n.Inputs[1:4] {
		a, out, err := e.matrix(w, in)
		if err != nil {
			return q, err
		}
		q.accs, q.outs = append(q.accs, a), append(q.outs, out)
	}
	if !slices.Equal(n.Ints("parts"), q.outs) {
		return q, fmt.Errorf("parts %v do not match the weights' rows %v", n.Ints("parts"), q.outs)
	}
	if q.outs[0]%2 != 0 || q.outs[1]%2 != 0 || q.outs[2]%2 != 0 {
		return q, fmt.Errorf("qkv parts %v must be even", q.outs)
	}
	q.rope = "Rope_none"
	if mode := n.Str("rope_mode"); mode != "" {
		if positions == nil {
			return q, fmt.Errorf("rope_mode %q without a positions input", mode)
		}
		var err error
		if q.rope, err = e.ropeConfig(n, mode); err != nil {
			return q, err
		}
		hd := n.Int("head_dim")
		if q.outs[0] != n.Int("heads")*hd || q.outs[1] != n.Int("kv_heads")*hd {
			return q, fmt.Errorf("q, k rows %d, %d are not heads·head_dim, kv_heads·head_dim", q.outs[0], q.outs[1])
		}
	}
	return q, nil
}

// qkvWeights adds qkv node n's three weights and their biases (nullptr when
// it has none) to c and returns the bias accessors.
func (e *emitter) qkvWeights(c *call, n *ir.Node, q qkvParts) []accessor {
	for i, w := range n.Inputs[1:4] {
		c.ptr(e, cWeight, "w"+"qkv"[i:i+1], w)
	}
	bAccs := make([]accessor, 3)
	for i := range bAccs {
		var b *ir.Node
		if q.biases != nil {
			b = q.biases[i]
		}
		bAccs[i] = e.bias(c, b, q.outs[i], "b"+"qkv"[i:i+1])
	}
	return bAccs
}

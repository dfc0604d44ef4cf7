package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// A decode step's add_rmsnorm / add_layernorm adds the output of the linear
// before it (the output or down projection) to the residual stream: a
// one-block launch per norm (two a layer), pure latency at these widths. The
// linear norms the row itself instead (linear_q8_norm, norm.cu.tmpl): the
// last of its blocks to finish a token row adds, norms and quantizes it,
// counted in by one arrival counter per token row in the arena.

// normAfter is the add-norm that integer-path decode linear n feeds as its
// only reader, when n can norm the row itself: one token a block row (not a
// prefill's token tiles) and the norm over the same rows; else nil.
func (e *emitter) normAfter(n *ir.Node) *ir.Node {
	users := e.users[n]
	if e.prefill || len(users) != 1 || e.tokenTile(n.Inputs[0]) != 1 {
		return nil
	}
	u := users[0]
	if u.Op != ir.OpAddRMSNorm && u.Op != ir.OpAddLayerNorm || u.Inputs[0] == u.Inputs[1] || rowsOf(u.Inputs[0]) != rowsOf(n) {
		return nil
	}
	return u
}

// linearNorm emits linear_q8 n (its weight and bias parameters in c, its
// template arguments up to QX in targs) fused with norm, which reads n's
// output: the norm's parameters follow the linear's, prefixed "n_", then
// the arrival counters; norm then emits no launch of its own.
func (e *emitter) linearNorm(c *call, n, norm *ir.Node, in, blocksX int64, staged bool, targs []string) ([]plans.Launch, error) {
	x := n.Inputs[0]
	quant, targs, err := e.intDotArgs(c, n, x, in, blocksX, staged, targs)
	if err != nil {
		return nil, err
	}
	p, err := e.normArgs(c, norm, "n_", n)
	if err != nil {
		return nil, err
	}
	c.arg("int* __restrict__", "counters", plans.Arg{Kind: plans.ArgArena, Offset: e.normCounters})
	e.normsFused[norm] = true
	targs = append(targs, p.cfg, p.w, p.b, fmt.Sprint(p.layer), p.q8)
	ls, err := e.emit(c, "linear_q8_norm", linThreads, gridTokenTiles(blocksX, rowsOf(x), 1), targs...)
	return append(quant, ls...), err
}

package cuda

import (
	"fmt"
	"slices"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// The prefill's matrix products run on tensor cores (templates/gemm.cu.tmpl):
// a CTA dequantizes a weight tile once and uses it for gemmBM tokens, where
// the decode kernels' token tile of prefillTile reads the weights T/8 times
// and multiplies in fp32 or dp4a.

// gemmBM is GEMM_BM, the tokens per CTA.
const gemmBM = 64

// gemmThreads is GEMM_THREADS: 8 warps.
const gemmThreads = 256

// gemmMinBlocks is the GEMM's CTAs per SM that its registers must allow
// (128 registers a thread): each thread holds the next K-step's raw loads
// across the MMAs, which left unbounded took a mixed-type qkv to 212
// registers (one CTA per SM, nvcc 11.8) for a spill of 80 bytes bounded.
const gemmMinBlocks = 2

// takesGEMM reports whether matrix node n (linear, swiglu_linear, qkv) runs
// as a tensor-core GEMM: in the prefill schedule, on the step's T rows, with
// a row length the f16 staging reads as whole float4s and accessor groups
// (every weight's group divides 8 or its block, which divides its rows).
func (e *emitter) takesGEMM(n *ir.Node) bool {
	x := n.Inputs[0]
	return e.prefill && rowsOf(x) == 0 && len(x.Shape) == 2 && x.Shape[1]%8 == 0 &&
		(n.Op == ir.OpLinear || n.Op == ir.OpSwiGLULinear || n.Op == ir.OpQKV)
}

// gemmBN is the weight rows per CTA for a product with rows weight rows:
// 128 (more reuse of each staged x tile) when that still gives a few
// hundred CTAs at max_tokens, else 64, so that narrow products (Qwen2.5's
// 896 outputs) keep the SMs busy.
func (e *emitter) gemmBN(rows int64) int64 {
	if ceilDiv(rows, 128)*ceilDiv(e.maxTokens, gemmBM) >= 256 {
		return 128
	}
	return 64
}

// gemmGrid is (ceil(rows/bn), ceil(T/gemmBM)).
func gemmGrid(rows, bn int64) grid { return gridTokenTiles(ceilDiv(rows, bn), 0, gemmBM) }

// gemmLinear: linear(x, w [, b]) as gemm_linear.
func (e *emitter) gemmLinear(n *ir.Node) ([]plans.Launch, error) {
	x := n.Inputs[0]
	in, err := activation(x)
	if err != nil {
		return nil, err
	}
	c := &call{}
	wa, ba, out, err := e.linearWeights(c, n, in)
	if err != nil {
		return nil, err
	}
	c.ptr(e, cIn, "x", x)
	c.ptr(e, cOut, "y", n)
	e.stateArg(c)
	bn := e.gemmBN(out)
	return e.emitBounded(c, "gemm_linear", gemmThreads, gemmMinBlocks, gemmGrid(out, bn), wa, ba, cInt(in), cInt(out), cInt(bn))
}

// gemmSwiGLU: swiglu_linear(x, wg, wu) or (x, wgu [2F, in]) as gemm_swiglu.
func (e *emitter) gemmSwiGLU(n *ir.Node) ([]plans.Launch, error) {
	x := n.Inputs[0]
	in, err := activation(x)
	if err != nil {
		return nil, err
	}
	c := &call{}
	ga, ua, f, upRow0, err := e.swigluWeights(c, n, in)
	if err != nil {
		return nil, err
	}
	c.ptr(e, cIn, "x", x)
	c.ptr(e, cOut, "y", n)
	e.stateArg(c)
	bn := e.gemmBN(2 * f)
	return e.emitBounded(c, "gemm_swiglu", gemmThreads, gemmMinBlocks, gemmGrid(2*f, bn), ga, ua, cInt(in), cInt(f), cInt(upRow0), cInt(bn))
}

// gemmQKV: qkv(x, wq, wk, wv [, bq, bk, bv] [, positions]) as gemm_qkv, then
// qkv_rope_store when q and k rotate or k and v go to the cache.
func (e *emitter) gemmQKV(n *ir.Node) ([]plans.Launch, error) {
	x := n.Inputs[0]
	in, err := activation(x)
	if err != nil {
		return nil, err
	}
	q, err := e.qkvInputs(n, in)
	if err != nil {
		return nil, err
	}
	c := &call{}
	bAccs := e.qkvWeights(c, n, q)
	c.ptr(e, cIn, "x", x)
	c.ptr(e, cOut, "y", n)
	e.stateArg(c)
	rows := q.outs[0] + q.outs[1] + q.outs[2]
	bn := e.gemmBN(rows)
	targs := append(append(q.accs, bAccs...), cInt(in), cInt(q.outs[0]), cInt(q.outs[1]), cInt(q.outs[2]), cInt(bn))
	ls, err := e.emitBounded(c, "gemm_qkv", gemmThreads, gemmMinBlocks, gemmGrid(rows, bn), targs...)
	if err != nil {
		return nil, err
	}
	att := e.attentionOf(n)
	kv := att != nil && q.outs[1] == att.Int("kv_heads")*att.Int("head_dim") && q.outs[2] == q.outs[1]
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
		e.kvStored[att] = true
	} else {
		s.null()
		s.null()
	}
	e.stateArg(s)
	rs, err := e.emit(s, "qkv_rope_store", 256, gridElems(0, rows/2, 256), q.rope, cInt(q.outs[0]), cInt(q.outs[1]), cInt(q.outs[2]), fmt.Sprint(kv))
	return append(ls, rs...), err
}

// qkvParts is what a qkv node's inputs and attributes say: each weight's
// accessor and rows, the optional biases, and the rope config (Rope_none
// without rope_mode).
type qkvParts struct {
	accs   []string
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
func (e *emitter) qkvWeights(c *call, n *ir.Node, q qkvParts) []string {
	for i, w := range n.Inputs[1:4] {
		c.ptr(e, cWeight, "w"+"qkv"[i:i+1], w)
	}
	bAccs := make([]string, 3)
	for i := range bAccs {
		var b *ir.Node
		if q.biases != nil {
			b = q.biases[i]
		}
		bAccs[i] = e.bias(c, b, q.outs[i], "b"+"qkv"[i:i+1])
	}
	return bAccs
}

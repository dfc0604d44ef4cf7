package compiler

import (
	"fmt"
	"math"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/ir"
)

// gpt-oss's clamped SwiGLU (modeling_gpt_oss: limit 7.0, alpha 1.702).
const (
	gptOSSSwiGLULimit = 7.0
	gptOSSSwiGLUAlpha = 1.702
)

// lowering is the graph under construction for one model. Dimensions are
// copied from the hyperparameters as int64, the IR's integer type.
type lowering struct {
	*builder
	h         *arch.Hparams
	nLayer    int64
	nEmbd     int64
	nHead     int64
	nHeadKV   int64
	headDim   int64
	vocab     int64
	nFF       int64    // feed-forward width; per expert for MoE models
	tokens    *ir.Node // i32[T]
	positions *ir.Node // i32[T]
}

// Lower builds the unfused graph of m: one graph for prefill and decode (T
// symbolic, at most maxTokens), inputs tokens and positions, output the
// logits of the last token [1, vocab].
func Lower(m *arch.Model, maxTokens int) (*ir.Graph, error) {
	if m == nil || m.File == nil {
		return nil, fmt.Errorf("compiler: no model to lower")
	}
	if maxTokens < 1 {
		return nil, fmt.Errorf("compiler: max tokens must be at least 1, got %d", maxTokens)
	}
	h := &m.H
	l := &lowering{
		builder: newBuilder(m.File), h: h,
		nLayer: int64(h.NLayer), nEmbd: int64(h.NEmbd), nHead: int64(h.NHead), nHeadKV: int64(h.NHeadKV),
		headDim: int64(h.HeadDim), vocab: int64(h.NVocab), nFF: int64(h.NFF),
	}
	if h.NExpert > 0 {
		l.nFF = int64(h.ExpertFF)
	}
	g := l.g
	g.Attrs["arch"] = h.Arch
	g.Attrs["n_layer"] = l.nLayer
	g.Attrs["n_embd"] = l.nEmbd
	g.Attrs["n_head"] = l.nHead
	g.Attrs["n_head_kv"] = l.nHeadKV
	g.Attrs["head_dim"] = l.headDim
	g.Attrs["vocab"] = l.vocab
	g.Attrs["ctx"] = int64(h.NCtx)
	g.Attrs["max_tokens"] = int64(maxTokens)

	l.tokens = g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "tokens"})
	l.positions = g.Add(ir.OpInput, ir.I32, ir.Shape{ir.T}, map[string]any{"name": "positions"})

	x := l.embed() // [T, n_embd]
	for i := int64(0); i < l.nLayer; i++ {
		switch {
		case h.NExpert > 0:
			x = l.moeLayer(i, x)
		case h.Norm == arch.LayerNorm:
			x = l.gpt2Layer(i, x)
		default:
			x = l.swiGLULayer(i, x)
		}
	}
	logits := l.head(x) // [1, vocab]
	if l.err != nil {
		return nil, l.err
	}
	g.Outputs = []*ir.Node{logits}
	return g, nil
}

// embed looks up token rows; gpt2 adds learned position rows.
func (l *lowering) embed() *ir.Node {
	tok := l.weight("token_embd.weight", ir.Shape{l.vocab, l.nEmbd}) // [vocab][n_embd]
	x := l.add(ir.OpEmbed, ir.Shape{ir.T, l.nEmbd}, nil, tok, l.tokens)
	if l.h.RopeMode != arch.RopeNone {
		return x
	}
	pos := l.weight("position_embd.weight", ir.Shape{int64(l.h.NCtx), l.nEmbd}) // [n_ctx][n_embd]
	p := l.add(ir.OpEmbed, ir.Shape{ir.T, l.nEmbd}, nil, pos, l.positions)
	return l.add(ir.OpAdd, ir.Shape{ir.T, l.nEmbd}, nil, x, p)
}

// head is the final norm, the last row, and the LM head (tied to token_embd
// when the file has no output.weight).
func (l *lowering) head(x *ir.Node) *ir.Node {
	x = l.norm("output_norm", x)
	x = l.add(ir.OpLast, ir.Shape{1, l.nEmbd}, nil, x)
	name := "output.weight"
	if !l.has(name) {
		name = "token_embd.weight"
	}
	return l.linear(x, l.weight(name, ir.Shape{l.vocab, l.nEmbd}), nil)
}

// norm applies the architecture's norm whose tensors are prefix.weight (and
// prefix.bias for LayerNorm).
func (l *lowering) norm(prefix string, x *ir.Node) *ir.Node {
	w := l.weight(prefix+".weight", ir.Shape{l.nEmbd})
	attrs := map[string]any{"eps": l.h.Eps}
	if l.h.Norm == arch.LayerNorm {
		b := l.weight(prefix+".bias", ir.Shape{l.nEmbd})
		return l.add(ir.OpLayerNorm, ir.Shape{ir.T, l.nEmbd}, attrs, x, w, b)
	}
	return l.add(ir.OpRMSNorm, ir.Shape{ir.T, l.nEmbd}, attrs, x, w)
}

// proj is a linear through blk.i.name.weight with its bias when the file has
// one.
func (l *lowering) proj(i int64, name string, x *ir.Node, out, in int64) *ir.Node {
	p := fmt.Sprintf("blk.%d.%s", i, name)
	w := l.weight(p+".weight", ir.Shape{out, in})
	return l.linear(x, w, l.optWeight(p+".bias", ir.Shape{out}))
}

// qkv projects the normed input to q [T, n_head·head_dim], k and v
// [T, n_head_kv·head_dim], through one fused weight when the file has one.
func (l *lowering) qkv(i int64, h *ir.Node) (q, k, v *ir.Node) {
	dq, dkv := l.nHead*l.headDim, l.nHeadKV*l.headDim
	if l.has(fmt.Sprintf("blk.%d.attn_qkv.weight", i)) {
		// Rows of attn_qkv are q, then k, then v.
		fused := l.proj(i, "attn_qkv", h, dq+2*dkv, l.nEmbd)
		parts := l.split(fused, dq, dkv, dkv)
		return parts[0], parts[1], parts[2]
	}
	return l.proj(i, "attn_q", h, dq, l.nEmbd), l.proj(i, "attn_k", h, dkv, l.nEmbd), l.proj(i, "attn_v", h, dkv, l.nEmbd)
}

// rope rotates q or k (heads of head_dim each) by the architecture's RoPE.
func (l *lowering) rope(x *ir.Node, heads int64) *ir.Node {
	attrs := map[string]any{
		"heads": heads, "head_dim": l.headDim, "rot_dim": int64(l.h.RopeDims),
		"base": l.h.RopeBase, "mode": l.h.RopeMode.String(),
	}
	if y := l.h.Scaling; y.Type == "yarn" {
		attrs["yarn_factor"] = y.Factor
		attrs["yarn_orig_ctx"] = int64(y.OrigCtx)
		attrs["yarn_beta_fast"] = y.BetaFast
		attrs["yarn_beta_slow"] = y.BetaSlow
	}
	return l.add(ir.OpRoPE, x.Shape, attrs, x, l.positions)
}

// attention is the attention block from the normed input h to the output
// projection's result [T, n_embd].
func (l *lowering) attention(i int64, h *ir.Node) *ir.Node {
	if l.err != nil {
		return nil
	}
	q, k, v := l.qkv(i, h)
	if l.h.RopeMode != arch.RopeNone && l.err == nil {
		q = l.rope(q, l.nHead)
		k = l.rope(k, l.nHeadKV)
	}
	attrs := map[string]any{
		"layer": i, "heads": l.nHead, "kv_heads": l.nHeadKV, "head_dim": l.headDim,
		"scale": 1 / math.Sqrt(float64(l.headDim)), "window": l.window(i),
	}
	shape := ir.Shape{ir.T, l.nHead * l.headDim}
	var a *ir.Node
	if sinks := fmt.Sprintf("blk.%d.attn_sinks.weight", i); l.has(sinks) {
		a = l.add(ir.OpAttention, shape, attrs, q, k, v, l.weight(sinks, ir.Shape{l.nHead}))
	} else {
		a = l.add(ir.OpAttention, shape, attrs, q, k, v)
	}
	return l.proj(i, "attn_output", a, l.nEmbd, l.nHead*l.headDim)
}

// window is layer i's sliding window, 0 for full attention.
func (l *lowering) window(i int64) int64 {
	if l.h.IsSWA(int(i)) {
		return int64(l.h.SlidingWindow)
	}
	return 0
}

func (l *lowering) residual(x, y *ir.Node) *ir.Node {
	return l.add(ir.OpAdd, ir.Shape{ir.T, l.nEmbd}, nil, x, y)
}

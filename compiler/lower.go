package compiler

import (
	"fmt"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
)

// lowering is the graph under construction for one model. Dimensions are
// copied from the hyperparameters as int64, the IR's integer type.
type lowering struct {
	*builder
	h       *arch.Hparams
	c       *arch.Compute // what the architecture computes
	w       *arch.Roles
	nEmbd   int64
	nHead   int64
	nHeadKV int64
	headDim int64
	vocab   int64
	nFF     int64   // feed-forward width; per expert for MoE models
	scale   float64 // attention logits' scale
	// ropeFactors divide the RoPE frequencies of global layers (nil: none).
	ropeFactors []float64 // [rope_dims/2]
	tokens      *ir.Node  // i32[T]
	positions   *ir.Node  // i32[T]
}

// Lower builds the unfused graph of m: one graph for prefill and decode (T
// symbolic, at most maxTokens), inputs tokens and positions, output the
// logits of the last token [1, vocab].
func Lower(m *arch.Model, maxTokens int) (*ir.Graph, error) {
	if m == nil {
		return nil, fmt.Errorf("compiler: no model to lower")
	}
	if maxTokens < 1 {
		return nil, fmt.Errorf("compiler: max tokens must be at least 1, got %d", maxTokens)
	}
	if n := m.H.NCtx; n > 0 && maxTokens > n {
		// A step can never hold more tokens than the context: the arena
		// would be sized for tokens no sequence reaches.
		return nil, fmt.Errorf("compiler: max tokens %d is above the model's context length %d", maxTokens, n)
	}
	w, err := m.Roles()
	if err != nil {
		return nil, err
	}
	factors, err := ropeFactors(m, w)
	if err != nil {
		return nil, err
	}
	h := &m.H
	l := &lowering{
		builder: newBuilder(), h: h, c: &m.Arch.Compute, w: w,
		nEmbd: int64(h.NEmbd), nHead: int64(h.NHead), nHeadKV: int64(h.NHeadKV),
		headDim: int64(h.HeadDim), vocab: int64(h.NVocab), nFF: int64(h.NFF),
		scale: m.Arch.AttentionScale(h), ropeFactors: factors,
	}
	if h.NExpert > 0 {
		l.nFF = int64(h.ExpertFF)
	}
	g := l.g
	g.Attrs["arch"] = h.Arch
	g.Attrs["n_layer"] = int64(h.NLayer)
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
	for i := range w.Layers {
		x = l.layer(int64(i), &w.Layers[i], x)
	}
	logits := l.head(x) // [1, vocab]
	if l.err != nil {
		return nil, l.err
	}
	g.Outputs = []*ir.Node{logits}
	return g, nil
}

// embed looks up token rows; learned positions (gpt2) add position rows.
func (l *lowering) embed() *ir.Node {
	x := l.add(ir.OpEmbed, ir.Shape{ir.T, l.nEmbd}, nil, l.weight(l.w.TokenEmbd), l.tokens)
	if l.c.EmbedScale != nil {
		x = l.add(ir.OpScale, ir.Shape{ir.T, l.nEmbd}, map[string]any{"factor": l.c.EmbedScale(l.h)}, x)
	}
	if l.w.PositionEmbd == nil {
		return x
	}
	p := l.add(ir.OpEmbed, ir.Shape{ir.T, l.nEmbd}, nil, l.weight(l.w.PositionEmbd), l.positions)
	return l.add(ir.OpAdd, ir.Shape{ir.T, l.nEmbd}, nil, x, p)
}

// head is the final norm, the last row, and the LM head (tied to token_embd
// when the file has no output.weight).
func (l *lowering) head(x *ir.Node) *ir.Node {
	x = l.norm(x, l.w.OutputNorm, l.w.OutputNormBias)
	x = l.add(ir.OpLast, ir.Shape{1, l.nEmbd}, nil, x)
	out := l.w.Output
	if out == nil {
		out = l.w.TokenEmbd
	}
	return l.linear(x, l.weight(out), nil)
}

// norm is the architecture's norm: RMSNorm, or LayerNorm with its bias.
func (l *lowering) norm(x *ir.Node, w, bias *gguf.TensorInfo) *ir.Node {
	attrs := map[string]any{"eps": l.h.Eps}
	if l.c.Norm == arch.LayerNorm {
		return l.add(ir.OpLayerNorm, ir.Shape{ir.T, l.nEmbd}, attrs, x, l.weight(w), l.weight(bias))
	}
	return l.add(ir.OpRMSNorm, ir.Shape{ir.T, l.nEmbd}, attrs, x, l.weight(w))
}

// proj is x·wᵀ plus the bias when the file has one.
func (l *lowering) proj(x *ir.Node, w, bias *gguf.TensorInfo) *ir.Node {
	return l.linear(x, l.weight(w), l.weight(bias))
}

// layer is one pre-norm block: x + attn(norm(x)), then + ffn(norm(·));
// with post norms, each branch is normed again before it joins x.
func (l *lowering) layer(i int64, b *arch.LayerRoles, x *ir.Node) *ir.Node {
	a := l.attention(i, b, l.norm(x, b.AttnNorm, b.AttnNormBias))
	if l.c.PostNorms {
		a = l.norm(a, b.PostAttnNorm, nil)
	}
	x = l.residual(x, a)
	f := l.ffn(b, l.norm(x, b.FFNNorm, b.FFNNormBias))
	if l.c.PostNorms {
		f = l.norm(f, b.PostFFNNorm, nil)
	}
	return l.residual(x, f)
}

// qkv projects the normed input to q [T, n_head·head_dim], k and v
// [T, n_head_kv·head_dim], through the fused weight when the file has one.
func (l *lowering) qkv(b *arch.LayerRoles, h *ir.Node) (q, k, v *ir.Node) {
	if b.AttnQKV != nil {
		dq, dkv := l.nHead*l.headDim, l.nHeadKV*l.headDim
		parts := l.split(l.proj(h, b.AttnQKV, b.AttnQKVBias), dq, dkv, dkv) // rows are q, then k, then v
		return parts[0], parts[1], parts[2]
	}
	return l.proj(h, b.AttnQ, b.AttnQBias), l.proj(h, b.AttnK, b.AttnKBias), l.proj(h, b.AttnV, b.AttnVBias)
}

// attention is the attention block from the normed input h to the output
// projection's result [T, n_embd].
func (l *lowering) attention(i int64, b *arch.LayerRoles, h *ir.Node) *ir.Node {
	q, k, v := l.qkv(b, h)
	if l.c.QKNorm {
		q = l.headNorm(q, b.AttnQNorm, l.nHead)
		k = l.headNorm(k, b.AttnKNorm, l.nHeadKV)
	}
	if l.c.Rotates(int(i)) {
		q = l.rope(i, q, l.nHead)
		k = l.rope(i, k, l.nHeadKV)
	}
	attrs := map[string]any{
		"layer": i, "heads": l.nHead, "kv_heads": l.nHeadKV, "head_dim": l.headDim,
		"scale": l.scale, "window": l.window(i),
	}
	inputs := []*ir.Node{q, k, v}
	if b.AttnSinks != nil {
		inputs = append(inputs, l.weight(b.AttnSinks))
	}
	a := l.add(ir.OpAttention, ir.Shape{ir.T, l.nHead * l.headDim}, attrs, inputs...)
	return l.proj(a, b.AttnOutput, b.AttnOutputBias)
}

// window is layer i's sliding window, 0 for full attention.
func (l *lowering) window(i int64) int64 {
	if l.h.IsSWA(int(i)) {
		return int64(l.h.SlidingWindow)
	}
	return 0
}

// headNorm is the per-head RMSNorm of q or k (heads of head_dim each).
func (l *lowering) headNorm(x *ir.Node, w *gguf.TensorInfo, heads int64) *ir.Node {
	attrs := map[string]any{"heads": heads, "head_dim": l.headDim, "eps": l.h.Eps}
	return l.add(ir.OpHeadRMSNorm, ir.Shape{ir.T, heads * l.headDim}, attrs, x, l.weight(w))
}

func (l *lowering) residual(x, y *ir.Node) *ir.Node {
	return l.add(ir.OpAdd, ir.Shape{ir.T, l.nEmbd}, nil, x, y)
}

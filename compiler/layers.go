package compiler

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
)

// swiGLULayer is one llama, qwen2 or phi3 block: RMSNorm, attention,
// residual, RMSNorm, SwiGLU FFN, residual.
func (l *lowering) swiGLULayer(i int64, x *ir.Node) *ir.Node {
	x = l.residual(x, l.attention(i, l.norm(fmt.Sprintf("blk.%d.attn_norm", i), x)))
	h := l.norm(fmt.Sprintf("blk.%d.ffn_norm", i), x)
	var act *ir.Node // [T, n_ff]
	if l.has(fmt.Sprintf("blk.%d.ffn_gate.weight", i)) {
		g := l.proj(i, "ffn_gate", h, l.nFF, l.nEmbd)
		u := l.proj(i, "ffn_up", h, l.nFF, l.nEmbd)
		act = l.add(ir.OpSwiGLU, ir.Shape{ir.T, l.nFF}, nil, g, u)
	} else {
		// phi3 packs [gate; up] into ffn_up: [2·n_ff][n_embd].
		gu := l.proj(i, "ffn_up", h, 2*l.nFF, l.nEmbd)
		act = l.add(ir.OpSwiGLU, ir.Shape{ir.T, l.nFF}, nil, gu)
	}
	return l.residual(x, l.proj(i, "ffn_down", act, l.nEmbd, l.nFF))
}

// gpt2Layer is one GPT-2 block: LayerNorm, attention (fused qkv, biases, no
// RoPE), residual, LayerNorm, GELU MLP with biases, residual.
func (l *lowering) gpt2Layer(i int64, x *ir.Node) *ir.Node {
	x = l.residual(x, l.attention(i, l.norm(fmt.Sprintf("blk.%d.attn_norm", i), x)))
	h := l.norm(fmt.Sprintf("blk.%d.ffn_norm", i), x)
	u := l.proj(i, "ffn_up", h, l.nFF, l.nEmbd)
	act := l.add(ir.OpGELU, ir.Shape{ir.T, l.nFF}, nil, u)
	return l.residual(x, l.proj(i, "ffn_down", act, l.nEmbd, l.nFF))
}

// moeLayer is one gpt-oss block: RMSNorm, attention with sinks and the
// layer's window, residual, RMSNorm (post_attention_norm), MoE, residual.
func (l *lowering) moeLayer(i int64, x *ir.Node) *ir.Node {
	x = l.residual(x, l.attention(i, l.norm(fmt.Sprintf("blk.%d.attn_norm", i), x)))
	h := l.norm(fmt.Sprintf("blk.%d.post_attention_norm", i), x)
	p := fmt.Sprintf("blk.%d.", i)
	e, f, d := int64(l.h.NExpert), l.nFF, l.nEmbd
	inputs := []*ir.Node{
		h,
		l.weight(p+"ffn_gate_inp.weight", ir.Shape{e, d}), // [n_expert][n_embd]
		l.weight(p+"ffn_gate_inp.bias", ir.Shape{e}),
		l.weight(p+"ffn_gate_exps.weight", ir.Shape{e, f, d}), // [n_expert][n_ff][n_embd]
		l.weight(p+"ffn_gate_exps.bias", ir.Shape{e, f}),
		l.weight(p+"ffn_up_exps.weight", ir.Shape{e, f, d}),
		l.weight(p+"ffn_up_exps.bias", ir.Shape{e, f}),
		l.weight(p+"ffn_down_exps.weight", ir.Shape{e, d, f}), // [n_expert][n_embd][n_ff]
		l.weight(p+"ffn_down_exps.bias", ir.Shape{e, d}),
	}
	attrs := map[string]any{
		"experts": e, "top_k": int64(l.h.NExpertUsed),
		"limit": gptOSSSwiGLULimit, "alpha": gptOSSSwiGLUAlpha,
	}
	moe := l.add(ir.OpMoE, ir.Shape{ir.T, d}, attrs, inputs...)
	return l.residual(x, moe)
}

package compiler

import (
	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/ir"
)

// ffn is the feed-forward half of a block on the normed input h: gpt-oss's
// mixture of experts, GPT-2's GELU MLP, or a SwiGLU MLP (phi3 packs gate and
// up into one weight).
func (l *lowering) ffn(b *block, h *ir.Node) *ir.Node {
	switch {
	case b.router != nil:
		return l.moe(b, h)
	case b.gate != nil:
		g := l.proj(h, b.gate, nil)                                 // [T, n_ff]
		u := l.proj(h, b.up, b.upBias)                              // [T, n_ff]
		act := l.add(ir.OpSwiGLU, ir.Shape{ir.T, l.nFF}, nil, g, u) // [T, n_ff]
		return l.proj(act, b.down, b.downBias)                      // [T, n_embd]
	case l.h.Norm == arch.LayerNorm:
		u := l.proj(h, b.up, b.upBias)                         // [T, n_ff]
		act := l.add(ir.OpGELU, ir.Shape{ir.T, l.nFF}, nil, u) // [T, n_ff]
		return l.proj(act, b.down, b.downBias)                 // [T, n_embd]
	default:
		gu := l.proj(h, b.up, b.upBias)                           // [T, 2·n_ff]: gate, then up
		act := l.add(ir.OpSwiGLU, ir.Shape{ir.T, l.nFF}, nil, gu) // [T, n_ff]
		return l.proj(act, b.down, b.downBias)                    // [T, n_embd]
	}
}

// moe is gpt-oss's mixture of experts: router top-k, softmax over the chosen,
// each expert a clamped SwiGLU with biases.
func (l *lowering) moe(b *block, h *ir.Node) *ir.Node {
	attrs := map[string]any{
		"experts": int64(l.h.NExpert), "top_k": int64(l.h.NExpertUsed),
		"limit": gptOSSSwiGLULimit, "alpha": gptOSSSwiGLUAlpha,
	}
	return l.add(ir.OpMoE, ir.Shape{ir.T, l.nEmbd}, attrs, h,
		l.weight(b.router), l.weight(b.routerBias), // [n_expert][n_embd], [n_expert]
		l.weight(b.gateExps), l.weight(b.gateExpsBias), // [n_expert][n_ff_exp][n_embd], [n_expert][n_ff_exp]
		l.weight(b.upExps), l.weight(b.upExpsBias),
		l.weight(b.downExps), l.weight(b.downExpsBias)) // [n_expert][n_embd][n_ff_exp], [n_expert][n_embd]
}

package compiler

import (
	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/ir"
)

// ffn is the feed-forward half of a block on the normed input h, in the
// form the architecture declares.
func (l *lowering) ffn(b *arch.LayerRoles, h *ir.Node) *ir.Node {
	switch l.c.FFN {
	case arch.FFNExperts:
		return l.moe(b, h)
	case arch.FFNGated:
		g := l.proj(h, b.FFNGate, nil)       // [T, n_ff]
		u := l.proj(h, b.FFNUp, b.FFNUpBias) // [T, n_ff]
		return l.proj(l.gated(g, u), b.FFNDown, b.FFNDownBias)
	case arch.FFNGatedPacked:
		gu := l.proj(h, b.FFNUp, b.FFNUpBias) // [T, 2·n_ff]: gate, then up
		return l.proj(l.gated(gu), b.FFNDown, b.FFNDownBias)
	default: // FFNPlain
		u := l.proj(h, b.FFNUp, b.FFNUpBias) // [T, n_ff]
		return l.proj(l.activate(u), b.FFNDown, b.FFNDownBias)
	}
}

// gated is act(gate)·up of the declared activation: of two [T, n_ff]
// inputs, or of one packed [T, 2·n_ff] (gate columns, then up).
func (l *lowering) gated(gu ...*ir.Node) *ir.Node {
	switch {
	case l.c.Act == arch.ActSiLU:
		return l.add(ir.OpSwiGLU, ir.Shape{ir.T, l.nFF}, nil, gu...)
	case l.c.Act == arch.ActGELUTanh && len(gu) == 2:
		return l.add(ir.OpGEGLU, ir.Shape{ir.T, l.nFF}, nil, gu...)
	}
	return l.fail("%s: a gated FFN with activation %d and %d inputs has no op", l.h.Arch, l.c.Act, len(gu))
}

// activate is the declared activation of an ungated FFN.
func (l *lowering) activate(u *ir.Node) *ir.Node {
	if l.c.Act != arch.ActGELUTanh {
		return l.fail("%s: an ungated FFN with activation %d has no op", l.h.Arch, l.c.Act)
	}
	return l.add(ir.OpGELU, ir.Shape{ir.T, l.nFF}, nil, u)
}

// moe is a mixture of experts by the declared router rule, each expert a
// SwiGLU FFN (clamped as gpt-oss's when declared), with biases where the
// file has them.
func (l *lowering) moe(b *arch.LayerRoles, h *ir.Node) *ir.Node {
	e := l.c.Experts
	if e == nil || l.c.Act != arch.ActSiLU {
		return l.fail("%s: only SwiGLU experts have an op", l.h.Arch)
	}
	// Both router rules give the same weights (arch.RouterSoftmaxTopKRenorm).
	attrs := map[string]any{"experts": int64(l.h.NExpert), "top_k": int64(l.h.NExpertUsed)}
	if e.Clamp != nil {
		attrs["limit"], attrs["alpha"] = e.Clamp.Limit, e.Clamp.Alpha
	}
	if b.FFNGateInpBias == nil && b.FFNGateExpsBias == nil && b.FFNUpExpsBias == nil && b.FFNDownExpsBias == nil {
		return l.add(ir.OpMoE, ir.Shape{ir.T, l.nEmbd}, attrs, h, l.weight(b.FFNGateInp),
			l.weight(b.FFNGateExps), l.weight(b.FFNUpExps), l.weight(b.FFNDownExps))
	}
	return l.add(ir.OpMoE, ir.Shape{ir.T, l.nEmbd}, attrs, h,
		l.weight(b.FFNGateInp), l.weight(b.FFNGateInpBias), // [n_expert][n_embd], [n_expert]
		l.weight(b.FFNGateExps), l.weight(b.FFNGateExpsBias), // [n_expert][n_ff_exp][n_embd], [n_expert][n_ff_exp]
		l.weight(b.FFNUpExps), l.weight(b.FFNUpExpsBias),
		l.weight(b.FFNDownExps), l.weight(b.FFNDownExpsBias)) // [n_expert][n_embd][n_ff_exp], [n_expert][n_embd]
}

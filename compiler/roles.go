package compiler

import (
	"fmt"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/gguf"
)

// tensors are a model's weights by the role lowering gives them, gathered
// from the architecture's declarative struct. nil means the file lacks the
// tensor (an optional bias, a tied output, a fused alternative).
type tensors struct {
	tokEmbd, posEmbd     *gguf.TensorInfo // [n_vocab][n_embd], [n_ctx][n_embd]
	outNorm, outNormBias *gguf.TensorInfo // [n_embd]
	output               *gguf.TensorInfo // [n_vocab][n_embd]; nil = tied to tokEmbd
	ropeFactors          *gguf.TensorInfo // per-frequency RoPE scaling (Llama-3, LongRoPE)
	blocks               []block
}

// block is one layer's tensors.
type block struct {
	attnNorm, attnNormBias *gguf.TensorInfo
	q, qBias               *gguf.TensorInfo // [n_head*head_dim][n_embd]
	k, kBias, v, vBias     *gguf.TensorInfo // [n_head_kv*head_dim][n_embd]
	qkv, qkvBias           *gguf.TensorInfo // fused [q; k; v] rows, instead of q, k, v
	out, outBias           *gguf.TensorInfo // [n_embd][n_head*head_dim]
	sinks                  *gguf.TensorInfo // [n_head]
	ffnNorm, ffnNormBias   *gguf.TensorInfo
	gate                   *gguf.TensorInfo // [n_ff][n_embd]; nil with a packed up
	up, upBias             *gguf.TensorInfo // [n_ff][n_embd], or phi3's [2*n_ff][n_embd] = [gate; up]
	down, downBias         *gguf.TensorInfo // [n_embd][n_ff]
	// Mixture of experts (gpt-oss).
	router, routerBias     *gguf.TensorInfo // [n_expert][n_embd], [n_expert]
	gateExps, gateExpsBias *gguf.TensorInfo // [n_expert][n_ff_exp][n_embd], [n_expert][n_ff_exp]
	upExps, upExpsBias     *gguf.TensorInfo
	downExps, downExpsBias *gguf.TensorInfo // [n_expert][n_embd][n_ff_exp], [n_expert][n_embd]
}

// rolesOf reads the architecture's weight struct into roles.
func rolesOf(m *arch.Model) (*tensors, error) {
	switch w := m.Weights.(type) {
	case *arch.Llama:
		t := &tensors{tokEmbd: w.TokenEmbd, outNorm: w.OutputNorm, output: w.Output, ropeFactors: w.RopeFreqs}
		for _, l := range w.Layers {
			t.blocks = append(t.blocks, block{
				attnNorm: l.AttnNorm, q: l.AttnQ, qBias: l.AttnQBias, k: l.AttnK, kBias: l.AttnKBias,
				v: l.AttnV, vBias: l.AttnVBias, out: l.AttnOutput, outBias: l.AttnOutputBias,
				ffnNorm: l.FFNNorm, gate: l.FFNGate, up: l.FFNUp, down: l.FFNDown,
			})
		}
		return t, nil
	case *arch.Qwen2:
		t := &tensors{tokEmbd: w.TokenEmbd, outNorm: w.OutputNorm, output: w.Output}
		for _, l := range w.Layers {
			t.blocks = append(t.blocks, block{
				attnNorm: l.AttnNorm, q: l.AttnQ, qBias: l.AttnQBias, k: l.AttnK, kBias: l.AttnKBias,
				v: l.AttnV, vBias: l.AttnVBias, out: l.AttnOutput,
				ffnNorm: l.FFNNorm, gate: l.FFNGate, up: l.FFNUp, down: l.FFNDown,
			})
		}
		return t, nil
	case *arch.Phi3:
		t := &tensors{tokEmbd: w.TokenEmbd, outNorm: w.OutputNorm, output: w.Output, ropeFactors: w.RopeFactorsShort}
		if w.RopeFactorsLong != nil && t.ropeFactors == nil {
			t.ropeFactors = w.RopeFactorsLong
		}
		for _, l := range w.Layers {
			t.blocks = append(t.blocks, block{
				attnNorm: l.AttnNorm, qkv: l.AttnQKV, out: l.AttnOutput,
				ffnNorm: l.FFNNorm, up: l.FFNUp, down: l.FFNDown,
			})
		}
		return t, nil
	case *arch.GPT2:
		t := &tensors{tokEmbd: w.TokenEmbd, posEmbd: w.PositionEmbd, outNorm: w.OutputNorm,
			outNormBias: w.OutputNormBias, output: w.Output}
		for _, l := range w.Layers {
			t.blocks = append(t.blocks, block{
				attnNorm: l.AttnNorm, attnNormBias: l.AttnNormBias, qkv: l.AttnQKV, qkvBias: l.AttnQKVBias,
				out: l.AttnOutput, outBias: l.AttnOutputBias, ffnNorm: l.FFNNorm, ffnNormBias: l.FFNNormBias,
				up: l.FFNUp, upBias: l.FFNUpBias, down: l.FFNDown, downBias: l.FFNDownBias,
			})
		}
		return t, nil
	case *arch.GPTOSS:
		t := &tensors{tokEmbd: w.TokenEmbd, outNorm: w.OutputNorm, output: w.Output}
		for _, l := range w.Layers {
			t.blocks = append(t.blocks, block{
				attnNorm: l.AttnNorm, q: l.AttnQ, qBias: l.AttnQBias, k: l.AttnK, kBias: l.AttnKBias,
				v: l.AttnV, vBias: l.AttnVBias, out: l.AttnOutput, outBias: l.AttnOutputBias,
				sinks: l.AttnSinks, ffnNorm: l.PostAttnNorm,
				router: l.FFNGateInp, routerBias: l.FFNGateInpBias,
				gateExps: l.FFNGateExps, gateExpsBias: l.FFNGateExpsBias,
				upExps: l.FFNUpExps, upExpsBias: l.FFNUpExpsBias,
				downExps: l.FFNDownExps, downExpsBias: l.FFNDownExpsBias,
			})
		}
		return t, nil
	}
	return nil, fmt.Errorf("compiler: no lowering for %s weights (%T)", m.H.Arch, m.Weights)
}

package cuda

import "github.com/llama-orch/orc/plans"

// The step-state block is a small device buffer the runtime fills with one
// host-to-device copy before every step, so that a decode step captured once
// as a CUDA graph stays valid: kernels read T, pos0, the capacity and this
// step's tokens and positions from it instead of from launch arguments.
//
//	offset  size          field
//	0       int32         T: tokens in this step (1 for decode)
//	4       int32         pos0: absolute position of the step's first token
//	8       int32         ctx: the sequence's KV-cache capacity in tokens
//	12      int32         reserved (zero), keeps the arrays 16-byte aligned
//	16      int32[MT]     tokens: this step's token ids
//	16+4MT  int32[MT]     positions: pos0+i for i < T
//	G       32 bytes      picks: u64 greedy key, int32 non-finite flag, 4
//	                      bytes, u64 draw key, u64 key over the logits no
//	                      penalty touches (plans.State.Greedy);
//	                      G = 16+8MT rounded up to 16
//	S       int32 words   the step's draw settings (plans.State.Sample,
//	                      common.cu.tmpl's SAMPLE_STEP), S = G+32
//
// MT is the plan's max_tokens; the block's size is rounded up to
// plans.Alignment. The picks are the one field kernels write: the runtime's
// copy zeroes them before every step; the sampler reads the greedy key, the
// flag and the unpenalised key after the LM head (sample.cu.tmpl,
// STEP_HEAD_KEYED).
const (
	stateT      = 0
	statePos0   = 4
	stateCtx    = 8
	stateTokens = 16
	picksBytes  = 32
)

// StateLayout is the step-state block of a plan with maxTokens tokens a step.
func StateLayout(maxTokens int64) plans.State {
	positions := stateTokens + 4*maxTokens
	greedy := alignUp(positions+4*maxTokens, 16)
	step := greedy + picksBytes
	return plans.State{
		Bytes:     alignUp(step+plans.SampleStepBytes, plans.Alignment),
		T:         stateT,
		Pos0:      statePos0,
		Ctx:       stateCtx,
		Tokens:    stateTokens,
		Positions: positions,
		Greedy:    greedy,
		Sample:    step,
	}
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

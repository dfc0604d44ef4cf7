package plans

// Sampler names the kernel that draws a step's token where its logits lie
// (codegen/cuda/templates/sample.cu.tmpl; runtime/sample's package comment
// is the method), so that a step returns a token id instead of the
// vocabulary's logits:
//
//	Draw (logits f32 [vocab], state block, scratch [ScratchBytes])
//
// It reads the step's settings from the state block (State.Sample) and
// leaves its pick in the draw key of State.Greedy's picks. Its Grid blocks
// must be resident at once: they meet at barriers in the scratch, which the
// runtime zeroes once and every launch leaves zeroed.
type Sampler struct {
	Draw         SampleKernel `msgpack:"draw"`
	ScratchBytes int64        `msgpack:"scratch_bytes"`
}

// SampleKernel is one kernel of a Sampler: a one-dimensional launch.
type SampleKernel struct {
	Kernel string `msgpack:"kernel"`
	Grid   int    `msgpack:"grid"`
	Block  int    `msgpack:"block"`
}

// The step's draw settings at State.Sample, int32 words (f32 as bits):
//
//	0 temperature, 1 top_k, 2 top_p, 3 min_p, 4 repetition penalty,
//	5 frequency penalty, 6 presence penalty, 7 penalised ids n,
//	8–9 the draw's key (u64), 10 non-zero if the LM head draws (a plain
//	draw), 11 non-zero if the step's LM head leaves its picks in
//	State.Greedy (a decode step where State.HeadPicks: the Draw kernel
//	may take the largest logit from the greedy key), then ids int32
//	[SampleRecent] and their counts int32 [SampleRecent].
const (
	SampleRecent    = 64
	SampleStepBytes = 4 * (12 + 2*SampleRecent)
)

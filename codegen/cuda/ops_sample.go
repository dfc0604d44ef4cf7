package cuda

import "github.com/llama-orch/orc/plans"

// The sampler (templates/sample.cu.tmpl): one kernel, its vocabulary baked in.
const (
	sampleThreads = 512 // SAMPLE_THREADS
	// sampleIDs is the ids a thread holds, at most, before blocks are
	// added: the passes over the ids are arithmetic (penalties, exp, the
	// noise) more than loads, so a vocabulary takes up to sampleBlocks SMs.
	sampleIDs      = 4
	sampleMaxIDs   = 16  // ids a thread may hold at all (registers; rowTies' bound is 64)
	sampleBlocks   = 64  // the most blocks (ties[] in the scratch); every H100 and A100 has more SMs
	sampleScratch  = 768 // SampleScratch's bytes before its histograms
	sampleHist     = 2048 * (4 + 8)
	sampleCand     = 2048 // SAMPLE_CAND: the fast path's candidates, 16 bytes each
	sampleTopKRoom = 32   // SAMPLE_TOPK_ROOM: the keys a block of sample_topk lists, 8 bytes each
	// sampleTopK is sample_topk's part: the blocks' published keys (at
	// most 128), each block's count and its listed keys.
	sampleTopK = 8*128 + 4*sampleBlocks + 8*sampleBlocks*sampleTopKRoom
)

// sampler emits the draw kernel and returns its plan record: G blocks of
// sampleThreads threads, each thread holding EPT ids; nil for a vocabulary
// past sampleBlocks·sampleThreads·sampleMaxIDs (524,288 ids: every model's
// so far; Gemma 3's 262,144 is the largest), which the runtime then
// samples on the host.
func (e *emitter) sampler() *plans.Sampler {
	v := int64(e.model.Vocab)
	g := min(ceilDiv(v, sampleThreads*sampleIDs), sampleBlocks)
	ept := ceilDiv(v, g*sampleThreads)
	if ept > sampleMaxIDs {
		return nil
	}
	scratch := int64(sampleScratch + 6*sampleHist + 16*sampleCand + sampleTopK)
	k := &instance{Threads: sampleThreads, Fn: "sample_draw", LaunchesAtEnd: true,
		Params: []param{{"const float* __restrict__", "logits"}, {"int* __restrict__", "state"}, {"SampleScratch* __restrict__", "scratch"}},
		TArgs:  sampleDrawArgs{V: v, G: g, EPT: ept, Slot: e.state.Greedy / 4, Scratch: scratch},
		Args:   []string{"logits", "state", "scratch"}}
	return &plans.Sampler{
		Draw:         plans.SampleKernel{Kernel: e.kernels.add(k), Grid: int(g), Block: sampleThreads},
		ScratchBytes: scratch,
	}
}

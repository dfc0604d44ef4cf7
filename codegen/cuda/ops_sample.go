package cuda

import "github.com/llama-orch/orc/plans"

// Sampling kernels (templates/sample.cu.tmpl): every plan gets them, with
// its vocabulary baked in.
const (
	sampleChunk      = 1024 // ids per block of sample_prep and sample_weights
	sampleThreads    = 256  // their threads
	sampleCandidates = 1024 // the longest sorted prefix sample_select returns (a power of two)
	sampleRecent     = 64   // recent ids sample_prep takes: runtime/sample.PenaltyWindow
)

// sampler emits the four kernels and returns their plan record.
func (e *emitter) sampler() *plans.Sampler {
	v := int64(e.model.Vocab)
	g := ceilDiv(v, sampleChunk)
	kernel := func(fn string, grid int64, threads int, params []param, targs ...string) plans.SampleKernel {
		args := make([]string, len(params))
		for i, p := range params {
			args[i] = p.name
		}
		k := &instance{Threads: threads, Params: params, Fn: fn, TArgs: targs, Args: args}
		return plans.SampleKernel{Kernel: e.kernels.add(k), Grid: int(grid), Block: threads}
	}
	const (
		f32In  = "const float* __restrict__"
		f32Out = "float* __restrict__"
		i32In  = "const int* __restrict__"
		i32Out = "int* __restrict__"
	)
	return &plans.Sampler{
		Prep: kernel("sample_prep", g, sampleThreads,
			[]param{{f32In, "logits"}, {i32In, "in"}, {f32Out, "lt"}, {"u64* __restrict__", "part"}, {i32Out, "bad"}},
			cInt(v), cInt(sampleChunk), cInt(sampleRecent)),
		Argmax: kernel("sample_argmax", 1, 1024,
			[]param{{"const u64* __restrict__", "part"}, {i32In, "bad"}, {i32Out, "out"}}, cInt(g)),
		Weights: kernel("sample_weights", g, sampleThreads,
			[]param{{f32In, "lt"}, {i32In, "out"}, {"double* __restrict__", "psum"}}, cInt(v), cInt(sampleChunk)),
		Select: kernel("sample_select", 1, 1024,
			[]param{{f32In, "lt"}, {"const double* __restrict__", "psum"}, {i32Out, "out"}}, cInt(v), cInt(g), cInt(sampleCandidates)),
		Blocks:     int(g),
		Recent:     sampleRecent,
		Candidates: sampleCandidates,
	}
}

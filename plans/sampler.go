package plans

// Sampler names the kernels that sample a step's logits where they lie
// (codegen/cuda/templates/sample.cu.tmpl has the exact layouts), so that a
// decode step returns a token id, or a short sorted prefix of candidates,
// instead of the vocabulary's logits. The runtime owns the buffers and
// passes them in this order:
//
//	Prep    (logits f32 [vocab], in, lt f32 [vocab], part u64 [Blocks], bad i32 [Blocks])
//	Argmax  (part, bad, out)
//	Weights (lt, out, psum f64 [Blocks])
//	Select  (lt, psum, out)
//
// in is int32 [4+Recent]: recent ids n, penalty and temperature (f32 bits),
// 0, then the ids; out is 32 bytes (best id, non-finite seen, candidates n,
// 0, the f64 sum) then ids int32 [Candidates] and logits f32 [Candidates].
// Greedy decoding runs Prep and Argmax; a draw runs all four and finishes on
// the host (runtime/sample.Prefix).
type Sampler struct {
	Prep    SampleKernel `msgpack:"prep"`
	Argmax  SampleKernel `msgpack:"argmax"`
	Weights SampleKernel `msgpack:"weights"`
	Select  SampleKernel `msgpack:"select"`
	// Blocks is Prep's and Weights' grid: one partial result each.
	Blocks int `msgpack:"blocks"`
	// Recent is the most penalised ids in; Candidates the longest prefix out.
	Recent     int `msgpack:"recent"`
	Candidates int `msgpack:"candidates"`
}

// SampleKernel is one kernel of a Sampler: a one-dimensional launch.
type SampleKernel struct {
	Kernel string `msgpack:"kernel"`
	Grid   int    `msgpack:"grid"`
	Block  int    `msgpack:"block"`
}

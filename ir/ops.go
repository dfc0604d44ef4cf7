package ir

// Op names an operation. The table below is the whole op set; the verifier
// checks every node against it.
type Op string

// Graph inputs and constants.
const (
	// input{name}: i32[T]. name is "tokens" or "positions" (absolute
	// positions of this step's tokens, pos0 .. pos0+T-1).
	OpInput Op = "input"
	// weight{name}: a tensor of the plan's weight blob, by its GGUF name, in
	// its storage dtype. [out, in] for matrices, [n_expert, out, in] for
	// expert stacks, [n] for vectors. A layout pass may add layout="...".
	// rows=[first, count] makes the node the row range first ..
	// first+count-1 of the tensor's first dimension (shape[0] = count):
	// fuseQKV cuts phi3's and gpt2's packed attn_qkv [q+k+v, in] and its
	// bias into q, k and v this way. Rows of every dtype are contiguous
	// bytes, so a range is a byte offset into the one stored tensor and
	// weights.bin holds it once (see plans.Tensor.Rows).
	OpWeight Op = "weight"
)

// Unfused model ops, as lowering emits them.
const (
	// embed(table, ids): f32[T, cols] = rows ids of table [rows, cols].
	OpEmbed Op = "embed"
	// add(a, b): elementwise, same shapes.
	OpAdd Op = "add"
	// rmsnorm(x, w){eps}: x / sqrt(mean(x²)+eps) · w, per row.
	OpRMSNorm Op = "rmsnorm"
	// layernorm(x, w, b){eps}: (x-mean)/sqrt(var+eps) · w + b, per row.
	OpLayerNorm Op = "layernorm"
	// linear(x, w [, b]): y[T, out] = x[T, in] · wᵀ (+ b[out]).
	OpLinear Op = "linear"
	// rope(x, positions){heads, head_dim, rot_dim, base, mode}: rotates the
	// first rot_dim dims of each head. mode "normal" pairs (2i, 2i+1); "neox"
	// pairs (i, i+rot_dim/2). Optional YaRN attrs: yarn_factor,
	// yarn_orig_ctx, yarn_beta_fast, yarn_beta_slow (gpt-oss). Optional
	// freq_factors [rot_dim/2] divide pair i's frequency (Llama 3's
	// rope_freqs); optional freq_scale multiplies every angle (linear
	// scaling: Gemma 3's global layers).
	OpRoPE Op = "rope"
	// head_rmsnorm(x, w){heads, head_dim, eps}: RMSNorm of each head's
	// head_dim columns of x [T, heads·head_dim], times w [head_dim] (the
	// q/k norm of Qwen3 and Gemma 3).
	OpHeadRMSNorm Op = "head_rmsnorm"
	// geglu(g, u): gelu(g)·u, GELU's tanh approximation (Gemma's gated FFN).
	OpGEGLU Op = "geglu"
	// scale(x){factor}: x·factor (Gemma's embedding scale).
	OpScale Op = "scale"
	// attention(q, k, v [, sinks]){layer, heads, kv_heads, head_dim, scale,
	// window}: stores k, v (already roped) in layer's KV cache at this step's
	// positions, then causal attention of q over the cache up to each
	// query's position; window > 0 limits it to the last window positions;
	// sinks [heads] add a per-head logit to the softmax denominator.
	// Result f32[T, heads*head_dim].
	OpAttention Op = "attention"
	// swiglu(g, u): silu(g)·u. swiglu(gu) with one [T, 2F] input: g is the
	// first F columns, u the last F (phi3's fused ffn_up).
	OpSwiGLU Op = "swiglu"
	// gelu(x): tanh approximation.
	OpGELU Op = "gelu"
	// last(x): the last row, [1, cols]; the LM head runs on it alone.
	OpLast Op = "last"
	// moe(x, router_w, router_b, gate_w, gate_b, up_w, up_b, down_w,
	// down_b){experts, top_k [, limit, alpha]}, or without biases
	// moe(x, router_w, gate_w, up_w, down_w): mixture of experts (see
	// MoEWeights). Router logits → top_k → softmax over those; per expert
	// with limit and alpha (gpt-oss) g = clamp(x·gateᵀ+b, max=limit),
	// u = clamp(x·upᵀ+b, ±limit), h = (u+1)·g·σ(alpha·g), without them
	// h = silu(x·gateᵀ+b)·(x·upᵀ+b); y = h·downᵀ + b; sum weighted by the
	// softmax.
	OpMoE Op = "moe"
	// view(x){part}: part of a packed multi-result node (zero-copy).
	OpView Op = "view"
	// split(x){parts=[c0, c1, ...]}: cuts the columns of x [T, c0+c1+...]
	// into a packed result, part i being columns c0+…+c_{i-1} onward; the
	// fused attn_qkv of phi3 and gpt2 is one linear then a split into q, k, v
	// as lowered (fuseQKV then makes it a qkv over row ranges of the weight).
	OpSplit Op = "split"
)

// Fused ops, made by passes.
const (
	// qkv(x, wq, wk, wv [, bq, bk, bv] [, positions]){parts=[q,k,v]}:
	// three projections of one input in one kernel; packed result
	// f32[T, q+k+v]. Biases come all three or none.
	// foldRoPE adds the positions input (always last) and the attributes
	// of the two ropes it removes, and then parts 0 and 1 come out roped:
	//   rope_mode string  "normal" | "neox" (the rope's mode)
	//   heads, kv_heads   int64   q has heads·head_dim columns, k kv_heads·head_dim
	//   head_dim, rot_dim int64   rot_dim even, ≤ head_dim (partial rotary)
	//   base              float64 θ
	//   yarn_factor, yarn_beta_fast, yarn_beta_slow float64, yarn_orig_ctx
	//                     int64   copied when the rope has them (gpt-oss)
	//   freq_scale float64, freq_factors []float64  copied likewise
	// The positions input is present exactly when rope_mode is.
	OpQKV Op = "qkv"
	// swiglu_linear(x, wg, wu) or swiglu_linear(x, wgu){act}: act(x·wgᵀ)·(x·wuᵀ)
	// in one kernel; the one-weight form takes phi3's packed [2F, in]. The
	// gate's activation is SiLU, or GELU's tanh approximation where act is
	// "gelu_tanh" (of a geglu; see GateAct).
	OpSwiGLULinear Op = "swiglu_linear"
	// add_rmsnorm(a, b, w){eps}: packed parts [cols, cols]: a+b, then
	// rmsnorm(a+b)·w.
	OpAddRMSNorm Op = "add_rmsnorm"
	// add_layernorm(a, b, w, bias){eps}: the same with LayerNorm.
	OpAddLayerNorm Op = "add_layernorm"
	// add_post_rmsnorm(a, b, wb, w){eps}: packed parts [cols, cols]:
	// s = a + rmsnorm(b)·wb, then rmsnorm(s)·w — a branch's post-norm
	// (Gemma's after attention and after the FFN), the residual add and the
	// next pre-norm in one kernel (fusePostNorms). One eps serves both.
	OpAddPostNorm Op = "add_post_rmsnorm"
	// norm_rope(x, w, positions){eps, and rope's attributes}: head_rmsnorm
	// then rope in one kernel (foldRoPE makes it of a q/k norm between a
	// qkv's part and its rope).
	OpNormRoPE Op = "norm_rope"
)

// Attributes that passes add to any node:
//   - layout string on a weight: its byte order for a GPU kernel family,
//     "gpu_<dtype>" (set by the layout passes, defined by codegen/cuda).
//   - offset int64: byte offset of the node's buffer in the activation
//     arena (planMemory). A view has its base's offset plus its part's.
// And to the graph: arena_bytes, peak_bytes int64 (planMemory).
//
// Packed nodes have shape [T, Σparts]; see the package comment for where
// each part lies.

// OpInfo is one row of the op table: inputs and required attributes.
type OpInfo struct {
	MinInputs, MaxInputs int
	Attrs                []string // required attribute keys
	Packed               bool     // result is packed; attr "parts" lists part widths
}

// Ops is the op table.
var Ops = map[Op]OpInfo{
	OpInput:        {0, 0, []string{"name"}, false},
	OpWeight:       {0, 0, []string{"name"}, false},
	OpEmbed:        {2, 2, nil, false},
	OpAdd:          {2, 2, nil, false},
	OpRMSNorm:      {2, 2, []string{"eps"}, false},
	OpLayerNorm:    {3, 3, []string{"eps"}, false},
	OpLinear:       {2, 3, nil, false},
	OpRoPE:         {2, 2, []string{"heads", "head_dim", "rot_dim", "base", "mode"}, false},
	OpHeadRMSNorm:  {2, 2, []string{"heads", "head_dim", "eps"}, false},
	OpGEGLU:        {2, 2, nil, false},
	OpScale:        {1, 1, []string{"factor"}, false},
	OpNormRoPE:     {3, 3, []string{"heads", "head_dim", "rot_dim", "base", "mode", "eps"}, false},
	OpAttention:    {3, 4, []string{"layer", "heads", "kv_heads", "head_dim", "scale", "window"}, false},
	OpSwiGLU:       {1, 2, nil, false},
	OpGELU:         {1, 1, nil, false},
	OpLast:         {1, 1, nil, false},
	OpMoE:          {5, 9, []string{"experts", "top_k"}, false},
	OpView:         {1, 1, []string{"part"}, false},
	OpSplit:        {1, 1, []string{"parts"}, true},
	OpQKV:          {4, 8, []string{"parts"}, true},
	OpSwiGLULinear: {2, 3, nil, false},
	OpAddRMSNorm:   {3, 3, []string{"eps", "parts"}, true},
	OpAddLayerNorm: {4, 4, []string{"eps", "parts"}, true},
	OpAddPostNorm:  {4, 4, []string{"eps", "parts"}, true},
}

// MoEWeights are a moe node's weight inputs; the biases are nil in the
// five-input form.
type MoEWeights struct {
	Router, RouterBias *Node // [E, D], [E]
	Gate, GateBias     *Node // [E, F, D], [E, F]
	Up, UpBias         *Node // [E, F, D], [E, F]
	Down, DownBias     *Node // [E, D, F], [E, D]
}

// MoEInputs reads moe node n's weights in either form.
func MoEInputs(n *Node) MoEWeights {
	in := n.Inputs
	if len(in) == 5 {
		return MoEWeights{Router: in[1], Gate: in[2], Up: in[3], Down: in[4]}
	}
	return MoEWeights{Router: in[1], RouterBias: in[2], Gate: in[3], GateBias: in[4], Up: in[5], UpBias: in[6], Down: in[7], DownBias: in[8]}
}

// Clamped reports whether moe node n's experts take gpt-oss's clamped
// SwiGLU (attributes limit and alpha).
func (n *Node) Clamped() bool {
	_, ok := n.Attrs["limit"]
	return ok
}

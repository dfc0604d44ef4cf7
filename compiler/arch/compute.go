package arch

import "math"

// Compute declares what an architecture computes beyond its tensors: the
// lowering reads it, so a new architecture is its weight struct and this
// declaration. Which tensors carry biases, and whether the LM head may be
// tied (an optional output.weight), its weight struct's tags declare.
type Compute struct {
	// Norm is the kind of every norm of the model.
	Norm NormKind
	// NormWeight is how the file's norm weights scale the normalised row.
	NormWeight NormWeight
	// PostNorms: the attention's and the FFN's outputs are normed again
	// (PostAttnNorm, PostFFNNorm) before each joins the residual.
	PostNorms bool
	// QKNorm: q and k are RMS-normed per head (weights AttnQNorm and
	// AttnKNorm of [head_dim]) between the projection and RoPE.
	QKNorm bool
	// Rope is how positions rotate q and k.
	Rope RopeMode
	// RopeLayers says which layers rotate q and k (nil: every layer, when
	// Rope is not RopeNone); the others attend without positions (NoPE).
	RopeLayers func(layer int) bool
	// RopeFreqFactors: a RopeFreqs tensor, when the file has one, divides
	// each rotation frequency (Llama 3's llama3 scaling, which llama.cpp's
	// converter computes into rope_freqs.weight).
	RopeFreqFactors bool
	// LocalRope, when set, is the RoPE of the sliding-window layers, which
	// then differ from the global layers' (rope.freq_base and
	// rope.scaling.* of the file).
	LocalRope *LocalRope
	// SlidingLayers says which layers attend over the sliding window only
	// (when the file sets attention.sliding_window); nil: none.
	SlidingLayers func(layer int) bool
	// FFN is the feed-forward block's form.
	FFN FFNKind
	// Act is the FFN's activation (of the gate, for gated FFNs).
	Act Activation
	// Experts declares the mixture of experts of an FFNExperts model.
	Experts *Experts
	// EmbedScale multiplies the token embeddings (0: no scaling).
	EmbedScale func(h *Hparams) float64
	// AttnScale is the attention logits' scale (nil: 1/√head_dim).
	AttnScale func(h *Hparams) float64
}

// NormWeight is a norm weight's convention.
type NormWeight int

const (
	// WeightAsStored: the row is multiplied by the stored weight.
	WeightAsStored NormWeight = iota
	// WeightOnePlusStoredByConverter: the model multiplies by (1 + w), and
	// llama.cpp's converter stores 1 + w (Gemma): applied as stored, and
	// an export to transformers subtracts 1.
	WeightOnePlusStoredByConverter
)

// LocalRope is the RoPE of sliding-window layers: its own base and no
// scaling (llama.cpp's rope_freq_base_train_swa, freq_scale 1).
type LocalRope struct {
	Base float64
}

// FFNKind is the feed-forward block's form.
type FFNKind int

const (
	FFNGated       FFNKind = iota // act(x·gateᵀ) · (x·upᵀ), then down
	FFNGatedPacked                // the same with ffn_up = [gate; up] rows (phi3)
	FFNPlain                      // act(x·upᵀ + b), then down (gpt2)
	FFNExperts                    // a mixture of gated experts (see Experts)
)

// Activation is the FFN's nonlinearity.
type Activation int

const (
	ActSiLU     Activation = iota // x·σ(x)
	ActGELUTanh                   // GELU, tanh approximation
)

// RouterRule is how a mixture of experts weighs its chosen experts.
type RouterRule int

const (
	// RouterTopKSoftmax: the top-k router logits, softmax over those k.
	RouterTopKSoftmax RouterRule = iota
	// RouterSoftmaxTopKRenorm: softmax over all experts, the top k
	// probabilities renormalised to sum 1 — the same weights as
	// RouterTopKSoftmax (exp(l_i)/Σ_top-k exp(l_j) either way), so it
	// lowers to the same op.
	RouterSoftmaxTopKRenorm
)

// Experts declares a mixture of experts: the router rule and the experts'
// gated activation (Act of the Compute), clamped when Clamp is set.
type Experts struct {
	Router RouterRule
	Clamp  *SwiGLUClamp
}

// SwiGLUClamp is gpt-oss's clamped SwiGLU (modeling_gpt_oss): gate clamped
// above at Limit, up to ±Limit, h = (up+1)·gate·σ(Alpha·gate).
type SwiGLUClamp struct {
	Limit, Alpha float64
}

// Rotates reports whether layer rotates q and k by position.
func (c *Compute) Rotates(layer int) bool {
	return c.Rope != RopeNone && (c.RopeLayers == nil || c.RopeLayers(layer))
}

// SqrtEmbd scales embeddings by √n_embd (Gemma).
func SqrtEmbd(h *Hparams) float64 { return math.Sqrt(float64(h.NEmbd)) }

// AttentionScale is the attention logits' scale of a model of architecture
// a with hyperparameters h.
func (a *Arch) AttentionScale(h *Hparams) float64 {
	if a.Compute.AttnScale != nil {
		return a.Compute.AttnScale(h)
	}
	return 1 / math.Sqrt(float64(h.HeadDim))
}

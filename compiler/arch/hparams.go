package arch

import (
	"fmt"

	"github.com/llama-orch/orc/gguf"
)

// RopeMode is how rotary position embedding pairs dimensions.
type RopeMode int

const (
	RopeNone   RopeMode = iota // learned positions (gpt2)
	RopeNormal                 // pairs (2i, 2i+1): llama, after the converter's q/k permutation
	RopeNeoX                   // pairs (i, i+dims/2): qwen2, phi3, gpt-oss
)

func (m RopeMode) String() string {
	return [...]string{"none", "normal", "neox"}[m]
}

// NormKind is the normalisation of an architecture.
type NormKind int

const (
	RMSNorm NormKind = iota
	LayerNorm
)

func (n NormKind) String() string { return [...]string{"rmsnorm", "layernorm"}[n] }

// MarshalText writes the name in JSON (orcc inspect --json).
func (m RopeMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// MarshalText writes the name in JSON (orcc inspect --json).
func (n NormKind) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// RopeScaling holds <arch>.rope.scaling.*; Type is "" when absent.
type RopeScaling struct {
	Type       string  `json:"type"`                    // "yarn", "linear", "none"
	Factor     float64 `json:"factor"`                  // context extension factor
	OrigCtx    int     `json:"original_context_length"` // original_context_length
	AttnFactor float64 `json:"attn_factor"`             // 0 when absent
	BetaFast   float64 `json:"beta_fast"`               // YaRN; llama.cpp's default 32
	BetaSlow   float64 `json:"beta_slow"`               // YaRN; llama.cpp's default 1
}

// Hparams are the typed hyperparameters of a model. Counts are ints; a head
// dim is per head.
type Hparams struct {
	Arch          string      `json:"arch"`
	NLayer        int         `json:"n_layer"`   // block_count
	NEmbd         int         `json:"n_embd"`    // embedding_length
	NHead         int         `json:"n_head"`    // attention.head_count
	NHeadKV       int         `json:"n_head_kv"` // attention.head_count_kv (default NHead)
	HeadDim       int         `json:"head_dim"`  // attention.key_length (default NEmbd/NHead)
	NFF           int         `json:"n_ff"`      // feed_forward_length
	NVocab        int         `json:"n_vocab"`   // vocab_size, else the tokenizer's token count, else token_embd rows
	NCtx          int         `json:"n_ctx"`     // context_length (training context)
	Eps           float64     `json:"norm_eps"`
	Norm          NormKind    `json:"norm"`
	RopeMode      RopeMode    `json:"rope_mode"`
	RopeBase      float64     `json:"rope_base"` // rope.freq_base (default 10000)
	RopeDims      int         `json:"rope_dims"` // rope.dimension_count (default HeadDim)
	Scaling       RopeScaling `json:"rope_scaling,omitzero"`
	SlidingWindow int         `json:"sliding_window"` // attention.sliding_window, 0 when absent
	NExpert       int         `json:"n_expert"`       // expert_count
	NExpertUsed   int         `json:"n_expert_used"`  // expert_used_count
	ExpertFF      int         `json:"expert_ff"`      // expert_feed_forward_length
	// TiedOutput: the LM head reuses token_embd (no output.weight). Known only
	// for files with tensors.
	TiedOutput bool   `json:"tied_output"`
	FileType   uint32 `json:"-"` // general.file_type, guessed from the tensor types when absent; FileTypeUnknown for a file without tensors
	// FileTypeGuessed says FileType came from gguf.GuessFileType.
	FileTypeGuessed bool `json:"-"`
	swa             func(int) bool
}

// FileTypeUnknown marks a file without general.file_type.
const FileTypeUnknown = ^uint32(0)

// IsSWA reports whether layer attends over the sliding window only.
func (h *Hparams) IsSWA(layer int) bool {
	return h.SlidingWindow > 0 && h.swa != nil && h.swa(layer)
}

// KVBytesPerToken is the FP16 KV cache size of one token: K and V for every
// layer and KV head.
func (h *Hparams) KVBytesPerToken() int64 {
	return 2 * int64(h.NLayer) * int64(h.NHeadKV) * int64(h.HeadDim) * 2
}

// keyReader reads <arch>.* keys and collects the first error.
type keyReader struct {
	f    *gguf.File
	arch string
}

func (r *keyReader) key(k string) string { return r.arch + "." + k }

func (r *keyReader) has(k string) bool { _, ok := r.f.Get(r.key(k)); return ok }

// int reads a required positive integer.
func (r *keyReader) int(k string) (int, error) {
	full := r.key(k)
	if _, ok := r.f.Get(full); !ok {
		return 0, fmt.Errorf("arch: %s: required key %s is missing", r.arch, full)
	}
	v, ok := r.f.Uint(full)
	if !ok {
		return 0, fmt.Errorf("arch: %s: key %s is not a non-negative integer (per-layer arrays are not supported)", r.arch, full)
	}
	if v == 0 || v > 1<<31 {
		return 0, fmt.Errorf("arch: %s: key %s = %d is out of range", r.arch, full, v)
	}
	return int(v), nil
}

// intOr reads an optional positive integer.
func (r *keyReader) intOr(k string, def int) (int, error) {
	if !r.has(k) {
		return def, nil
	}
	return r.int(k)
}

func (r *keyReader) float(k string) (float64, error) {
	full := r.key(k)
	if _, ok := r.f.Get(full); !ok {
		return 0, fmt.Errorf("arch: %s: required key %s is missing", r.arch, full)
	}
	v, ok := r.f.Float(full)
	if !ok {
		return 0, fmt.Errorf("arch: %s: key %s is not a number", r.arch, full)
	}
	return v, nil
}

func (r *keyReader) floatOr(k string, def float64) (float64, error) {
	if !r.has(k) {
		return def, nil
	}
	return r.float(k)
}

// ReadHparams detects the architecture and reads its hyperparameters with
// llama.cpp's defaults, validating them. It needs no tensors except to learn
// the vocabulary size when neither vocab_size nor a token list is present.
func ReadHparams(f *gguf.File) (*Arch, *Hparams, error) {
	a, err := Detect(f)
	if err != nil {
		return nil, nil, err
	}
	r := &keyReader{f: f, arch: a.Name}
	h := &Hparams{Arch: a.Name, Norm: a.Compute.Norm, RopeMode: a.Compute.Rope, FileType: FileTypeUnknown, swa: a.Compute.SlidingLayers}
	steps := []func() error{
		func() (err error) { h.NLayer, err = r.int("block_count"); return },
		func() (err error) { h.NEmbd, err = r.int("embedding_length"); return },
		func() (err error) { h.NCtx, err = r.int("context_length"); return },
		func() (err error) { h.NFF, err = r.int("feed_forward_length"); return },
		func() (err error) { h.NHead, err = r.int("attention.head_count"); return },
		func() (err error) { h.NHeadKV, err = r.intOr("attention.head_count_kv", h.NHead); return },
		func() (err error) {
			if h.NEmbd%h.NHead != 0 && !r.has("attention.key_length") {
				return fmt.Errorf("arch: %s: embedding_length %d is not a multiple of head_count %d and attention.key_length is absent", a.Name, h.NEmbd, h.NHead)
			}
			h.HeadDim, err = r.intOr("attention.key_length", h.NEmbd/h.NHead)
			return
		},
		func() (err error) { h.Eps, err = r.float(a.EpsKey); return },
		func() (err error) { h.RopeBase, err = r.floatOr("rope.freq_base", 10000); return },
		func() (err error) { h.RopeDims, err = r.intOr("rope.dimension_count", h.HeadDim); return },
		func() (err error) { h.SlidingWindow, err = r.intOr("attention.sliding_window", 0); return },
		func() error { return readScaling(r, &h.Scaling) },
		func() error { return readVocab(f, r, h) },
	}
	if a.extra != nil {
		steps = append(steps, func() error { return a.extra(r, h) })
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, nil, err
		}
	}
	if ft, ok := f.Uint("general.file_type"); ok {
		h.FileType = uint32(ft)
	} else if len(f.Tensors) > 0 {
		h.FileType = gguf.GuessFileType(f)
		h.FileTypeGuessed = true
	}
	if _, ok := f.Tensor("output.weight"); !ok && len(f.Tensors) > 0 {
		h.TiedOutput = true
	}
	if err := h.validate(); err != nil {
		return nil, nil, err
	}
	return a, h, nil
}

// readScaling reads rope.scaling.*; phi3 files carry
// original_context_length without a type, so each key is read on its own.
func readScaling(r *keyReader, s *RopeScaling) (err error) {
	if r.has("rope.scaling.type") {
		t, ok := r.f.String(r.key("rope.scaling.type"))
		if !ok {
			return fmt.Errorf("arch: %s: key %s is not a string", r.arch, r.key("rope.scaling.type"))
		}
		s.Type = t
	}
	if s.Factor, err = r.floatOr("rope.scaling.factor", 1); err != nil {
		return err
	}
	if s.OrigCtx, err = r.intOr("rope.scaling.original_context_length", 0); err != nil {
		return err
	}
	if s.AttnFactor, err = r.floatOr("rope.scaling.attn_factor", 0); err != nil {
		return err
	}
	if s.Type != "yarn" {
		return nil
	}
	if s.BetaFast, err = r.floatOr("rope.scaling.yarn_beta_fast", 32); err != nil {
		return err
	}
	s.BetaSlow, err = r.floatOr("rope.scaling.yarn_beta_slow", 1)
	return err
}

// readVocab takes the vocabulary size as llama.cpp does: <arch>.vocab_size,
// else the token list's length, else token_embd's row count.
func readVocab(f *gguf.File, r *keyReader, h *Hparams) (err error) {
	if r.has("vocab_size") {
		h.NVocab, err = r.int("vocab_size")
		return err
	}
	if toks, ok := f.Strings("tokenizer.ggml.tokens"); ok && len(toks) > 0 {
		h.NVocab = len(toks)
		return nil
	}
	if t, ok := f.Tensor("token_embd.weight"); ok && len(t.Dims) == 2 {
		h.NVocab = int(t.Dims[1])
		return nil
	}
	return fmt.Errorf("arch: %s: vocabulary size unknown: no %s, no tokenizer.ggml.tokens and no token_embd.weight", r.arch, r.key("vocab_size"))
}

// maxLayers bounds block_count (real models have at most a few hundred) so
// that a hostile header cannot make Load allocate a huge layer table.
const maxLayers = 4096

func (h *Hparams) validate() error {
	switch {
	case h.NLayer > maxLayers:
		return fmt.Errorf("arch: %s: block_count %d exceeds the limit of %d", h.Arch, h.NLayer, maxLayers)
	case h.NHeadKV > h.NHead || h.NHead%h.NHeadKV != 0:
		return fmt.Errorf("arch: %s: head_count %d is not a multiple of head_count_kv %d", h.Arch, h.NHead, h.NHeadKV)
	case h.RopeMode != RopeNone && (h.RopeDims > h.HeadDim || h.RopeDims%2 != 0):
		return fmt.Errorf("arch: %s: rope.dimension_count %d must be even and at most the head dim %d", h.Arch, h.RopeDims, h.HeadDim)
	case h.Eps <= 0 || h.Eps > 0.1:
		return fmt.Errorf("arch: %s: norm epsilon %g is out of range", h.Arch, h.Eps)
	case h.RopeMode != RopeNone && h.RopeBase <= 0:
		return fmt.Errorf("arch: %s: rope.freq_base %g must be positive", h.Arch, h.RopeBase)
	case h.NExpert > 0 && (h.NExpertUsed <= 0 || h.NExpertUsed > h.NExpert):
		return fmt.Errorf("arch: %s: expert_used_count %d must be in 1..expert_count %d", h.Arch, h.NExpertUsed, h.NExpert)
	}
	return nil
}

// readExperts reads a mixture of experts' counts and expert width.
func readExperts(r *keyReader, h *Hparams) (err error) {
	if h.NExpert, err = r.int("expert_count"); err != nil {
		return err
	}
	if h.NExpertUsed, err = r.int("expert_used_count"); err != nil {
		return err
	}
	h.ExpertFF, err = r.intOr("expert_feed_forward_length", h.NFF)
	return err
}

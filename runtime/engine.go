// Package runtime runs plans. A Device (the CPU reference device, or CUDA)
// loads a plan and hands out Sequences; each Sequence owns one KV cache and
// runs prefill and decode steps. The runtime never imports the compiler: the
// plan carries everything it needs.
package runtime

import (
	"context"

	"github.com/llama-orch/orc/runtime/sample"
)

// Info is what a loaded plan reports about itself and its device.
type Info struct {
	Model         string // model name from the plan
	Arch          string
	QuantKind     string // file type, e.g. "Q4_K_M", "MXFP4_MOE"
	Device        string // "cpu" or "cuda:N"
	DeviceName    string // e.g. "NVIDIA H100 80GB HBM3"
	SM            string // e.g. "sm_90"; "" on the CPU
	CUDAVersion   string // driver's CUDA version; "" on the CPU
	Vocab         int
	ContextLength int   // the context a Sequence may reach (from --ctx, at most the model's)
	MaxTokens     int   // the most tokens one Forward takes (the plan's max_tokens)
	VRAMBytesUsed int64 // weights + arena + caches; 0 on the CPU
	Resident      bool  // weights verified resident on the device
}

// Device is a loaded plan on one device.
type Device interface {
	Info() Info
	// NewSequence allocates a KV cache for one sequence of up to ctxLen
	// tokens. It fails with an error wrapping ErrOutOfMemory when the cache
	// cannot be allocated; nothing stays allocated then.
	NewSequence(ctxLen int) (Sequence, error)
	// CheckResidency re-verifies that the weights are still on the device.
	CheckResidency() error
	// Close frees everything the device holds.
	Close() error
}

// Sequence is one stream of tokens with its KV cache.
type Sequence interface {
	// Forward appends tokens at the next positions (prefill when several,
	// decode when one) and returns the logits of the last one, [vocab].
	// The slice is valid until the next call.
	Forward(ctx context.Context, tokens []int32) ([]float32, error)
	// Pos is the number of tokens already in the cache.
	Pos() int
	// Close frees the KV cache.
	Close() error
}

// SamplingSequence is a Sequence whose device also samples: ForwardSample
// runs Forward's steps and returns the token s.Sample would return for the
// step's logits, recent and the position after the tokens (seq.Pos()
// after the step), without bringing the logits to the host (the CUDA device
// draws where they lie, by the same arithmetic). Generate uses it when a
// sequence has it; the CPU device samples on the host.
type SamplingSequence interface {
	Sequence
	ForwardSample(ctx context.Context, tokens []int32, s *sample.Sampler, recent []int32) (int32, error)
}

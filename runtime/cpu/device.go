// Package cpu is orc's reference device: it interprets a plan's IR in Go
// float32, decoding quantized weights on the fly from the plan's mapped
// blob, with a float32 KV cache per sequence. It is the independent truth
// the CUDA device is compared with, and a fallback without a GPU.
package cpu

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"syscall"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

// Options tune Open.
type Options struct {
	Threads int // goroutines per matmul; 0 = GOMAXPROCS
	Ctx     int // the context a Sequence may reach; 0 = the model's context length
	// Route, when set, sees each token's routing by each mixture of
	// experts before its experts run, in sequences and batches alike, and
	// may change the picks. Where the router's logits nearly tie (a small
	// Margin), another device's rounding may route the token otherwise;
	// tests that compare it with this one turn those routings here
	// (batchtest.ExplainByTurns) to compute what it computed.
	Route func(*Routing)
}

// Device is a plan loaded for the CPU. Steps of all its sequences run one
// at a time (they share the activation arena and every core).
type Device struct {
	plan *plans.Plan
	prog *program
	info runtime.Info
	mu   sync.Mutex
}

var _ runtime.Device = (*Device)(nil)

// Open binds the plan's graph to its weights. The device owns p from then
// on: Close closes it.
func Open(p *plans.Plan, o Options) (*Device, error) {
	if p == nil || p.Weights == nil && len(p.Manifest.Tensors) > 0 {
		return nil, errors.New("cpu: the plan is not open")
	}
	m := &p.Manifest
	if m.Target != "cpu" {
		return nil, fmt.Errorf("cpu: the plan targets %q; compile one with --device cpu", m.Target)
	}
	// A plan opened with a deferred hash is checked before any weight is read.
	if err := p.VerifyWeights(); err != nil {
		return nil, err
	}
	g, err := ir.Parse(m.Graph)
	if err != nil {
		return nil, fmt.Errorf("cpu: the plan's graph: %w", err)
	}
	threads := o.Threads
	if threads <= 0 {
		threads = goruntime.GOMAXPROCS(0)
	}
	prog, err := newProgram(p, g, threads)
	if err != nil {
		return nil, err
	}
	prog.route = o.Route
	if mt := m.Memory.MaxTokens; mt != 0 && mt != prog.maxTokens {
		return nil, fmt.Errorf("cpu: the manifest says max_tokens %d, the graph %d", mt, prog.maxTokens)
	}
	ctx := m.Model.ContextLength
	if o.Ctx > 0 {
		if ctx > 0 && o.Ctx > ctx {
			return nil, fmt.Errorf("cpu: context %d exceeds the model's %d", o.Ctx, ctx)
		}
		ctx = o.Ctx
	}
	if ctx <= 0 {
		return nil, fmt.Errorf("cpu: the plan gives no context length; pass one")
	}
	return &Device{plan: p, prog: prog, info: runtime.Info{
		Model:         m.Model.Name,
		Arch:          m.Model.Arch,
		QuantKind:     m.Model.FileType,
		Device:        "cpu",
		DeviceName:    fmt.Sprintf("Go float32 reference, %d threads", threads),
		Vocab:         prog.vocab,
		ContextLength: ctx,
		MaxTokens:     prog.maxTokens,
		Resident:      true,
	}}, nil
}

// Info describes the plan and the device.
func (d *Device) Info() runtime.Info { return d.info }

// NewSequence allocates a float32 KV cache for ctxLen tokens.
func (d *Device) NewSequence(ctxLen int) (runtime.Sequence, error) {
	if ctxLen < 1 || ctxLen > d.info.ContextLength {
		return nil, fmt.Errorf("cpu: sequence context %d is outside [1, %d]", ctxLen, d.info.ContextLength)
	}
	if err := checkHostMemory(kvBytes(d.prog.kv, ctxLen), fmt.Sprintf("a KV cache of %d tokens", ctxLen)); err != nil {
		return nil, err
	}
	return &Sequence{dev: d, kv: newKVCache(d.prog.kv, ctxLen)}, nil
}

// checkHostMemory refuses what, of need bytes, when it is larger than the
// machine's memory. Free memory understates what the kernel can reclaim
// (page cache), so only that is refused up front.
func checkHostMemory(need int64, what string) error {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		if total := int64(si.Totalram) * int64(si.Unit); need > total {
			return fmt.Errorf("cpu: %s needs %d bytes, the machine has %d: %w", what, need, total, runtime.ErrOutOfMemory)
		}
	}
	return nil
}

// CheckResidency reports whether the weights are still mapped.
func (d *Device) CheckResidency() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mapped()
}

func (d *Device) mapped() error {
	if d.plan.Weights == nil && len(d.plan.Manifest.Tensors) > 0 {
		return errors.New("cpu: the device is closed")
	}
	return nil
}

// Close unmaps the plan, after the step in progress if there is one.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.plan.Close()
}

// Sequence is one token stream with its float32 KV cache.
type Sequence struct {
	dev    *Device
	kv     *kvCache
	pos    int
	logits []float32
	// decodeRows: a batch's solo sequence, whose steps compute as the
	// batched step does (stepState.decodeRows).
	decodeRows bool
}

// Forward runs one step over tokens (1 .. max_tokens of them) at the next
// positions and returns the last token's logits.
func (s *Sequence) Forward(ctx context.Context, tokens []int32) ([]float32, error) {
	pr := s.dev.prog
	switch {
	case s.kv == nil:
		return nil, errors.New("cpu: the sequence is closed")
	case len(tokens) == 0:
		return nil, errors.New("cpu: Forward needs at least one token")
	case len(tokens) > pr.maxTokens:
		return nil, fmt.Errorf("cpu: %d tokens in one step; the plan's max_tokens is %d", len(tokens), pr.maxTokens)
	case s.pos+len(tokens) > s.kv.positions():
		return nil, fmt.Errorf("cpu: %d tokens at position %d pass the context of %d: %w", len(tokens), s.pos, s.kv.positions(), runtime.ErrContextFull)
	}
	for _, id := range tokens {
		if id < 0 || int(id) >= pr.vocab {
			return nil, fmt.Errorf("cpu: token id %d is outside the vocabulary of %d", id, pr.vocab)
		}
	}
	positions := make([]int32, len(tokens))
	for i := range positions {
		positions[i] = int32(s.pos + i)
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	if err := s.dev.mapped(); err != nil {
		return nil, err
	}
	logits, err := pr.run(ctx, &stepState{t: len(tokens), tokens: tokens, positions: positions, kv: s.kv, decodeRows: s.decodeRows})
	if err != nil {
		return nil, err
	}
	s.logits = append(s.logits[:0], logits...)
	s.pos += len(tokens)
	return s.logits, nil
}

// Pos is the number of tokens in the cache.
func (s *Sequence) Pos() int { return s.pos }

// Close frees the cache.
func (s *Sequence) Close() error { s.kv = nil; return nil }

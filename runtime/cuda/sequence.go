package cuda

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

// sequence is one stream of tokens with its KV cache
// [n_layer][2][ctx][n_head_kv*head_dim] fp16 and its captured decode graph.
type sequence struct {
	d       *Device
	kv      devptr
	kvBytes int64
	ctx     int
	pos     int
	reg     regions // the device's regions plus this KV cache
	decode  graph   // 0 until the first decode step captures it
	b       batch   // reused launch batch
	logits  []byte  // pinned f32 [vocab]: the last step's result
	closed  bool
}

// NewSequence allocates and zeroes a KV cache of ctxLen tokens (0 means the
// device's context).
func (d *Device) NewSequence(ctxLen int) (runtime.Sequence, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errors.New("cuda: device is closed")
	}
	if ctxLen == 0 {
		ctxLen = d.ctx
	}
	if ctxLen < 1 || ctxLen > d.ctx {
		return nil, fmt.Errorf("cuda: sequence context %d is outside 1..%d (the device's context)", ctxLen, d.ctx)
	}
	m := &d.plan.Manifest
	s := &sequence{d: d, ctx: ctxLen, kvBytes: kvBytes(&m.Model, ctxLen)}
	if err := d.fits(s.kvBytes, "a KV cache of "+fmt.Sprint(ctxLen)+" tokens"); err != nil {
		return nil, err
	}
	var err error
	if s.kv, err = d.g.alloc(max(s.kvBytes, 1)); err != nil {
		return nil, d.outOfMemory(err, s.kvBytes, "a KV cache")
	}
	if s.logits, err = d.g.hostAlloc(4 * max(m.Model.Vocab, 1)); err != nil {
		return nil, errors.Join(err, d.g.free(s.kv))
	}
	if err := d.g.memset(s.kv, 0, s.kvBytes); err != nil {
		return nil, errors.Join(err, s.free())
	}
	s.reg = d.reg
	s.reg.kv, s.reg.kvBytes, s.reg.ctx = uint64(s.kv), s.kvBytes, int64(ctxLen)
	d.seqs[s] = struct{}{}
	d.kvLive += s.kvBytes
	return s, nil
}

func (s *sequence) Pos() int { return s.pos }

// Forward runs tokens through the model in steps of at most max_tokens:
// prefill launches for several tokens, the captured decode graph for one.
// The returned logits alias a pinned buffer, valid until the next call.
func (s *sequence) Forward(ctx context.Context, tokens []int32) ([]float32, error) {
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if s.closed {
		return nil, errors.New("cuda: sequence is closed")
	}
	m := &d.plan.Manifest
	if len(tokens) == 0 {
		return nil, errors.New("cuda: Forward needs at least one token")
	}
	if s.pos+len(tokens) > s.ctx {
		return nil, fmt.Errorf("%w: %d tokens at position %d pass the sequence's context of %d", runtime.ErrContextFull, len(tokens), s.pos, s.ctx)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= m.Model.Vocab {
			return nil, fmt.Errorf("cuda: token %d at index %d is outside the vocabulary of %d", t, i, m.Model.Vocab)
		}
	}
	for len(tokens) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(len(tokens), m.Memory.MaxTokens)
		if err := s.step(tokens[:n]); err != nil {
			return nil, err
		}
		s.pos += n
		tokens = tokens[n:]
	}
	k := m.Kernels
	if err := d.g.copyDtoH(s.logits, devptr(s.reg.arena+uint64(k.Logits))); err != nil {
		return nil, err
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&s.logits[0])), m.Model.Vocab), nil
}

// step writes the state block and enqueues one step of len(tokens) tokens.
func (s *sequence) step(tokens []int32) error {
	d := s.d
	k := d.plan.Manifest.Kernels
	decode := len(tokens) == 1 && len(k.Decode) > 0
	if d.syncEach {
		return s.stepChecked(tokens, decode)
	}
	if decode && s.decode == 0 {
		// Captured before any work of this step is queued, so the graph
		// holds the kernels alone.
		if err := s.capture(k.Decode); err != nil {
			return err
		}
	}
	// The previous step's state copy may still be queued: wait before
	// rewriting its pinned source.
	if err := d.g.sync(); err != nil {
		return err
	}
	writeState(d.state, &k.State, tokens, s.pos, s.ctx)
	if err := d.g.copyHtoD(devptr(s.reg.state), d.state); err != nil {
		return err
	}
	if decode {
		return d.g.graphLaunch(s.decode)
	}
	if err := resolve(k.Prefill, d.fns, int64(len(tokens)), &s.reg, &s.b); err != nil {
		return fmt.Errorf("cuda: prefill schedule: %w", err)
	}
	return d.g.launch(&s.b)
}

// stepChecked is step without a graph, synchronising after every launch so
// that a faulting kernel is named (Options.SyncEachLaunch).
func (s *sequence) stepChecked(tokens []int32, decode bool) error {
	d := s.d
	k := d.plan.Manifest.Kernels
	name, sched := "prefill", k.Prefill
	if decode {
		name, sched = "decode", k.Decode
	}
	if err := d.g.sync(); err != nil {
		return err
	}
	writeState(d.state, &k.State, tokens, s.pos, s.ctx)
	if err := d.g.copyHtoD(devptr(s.reg.state), d.state); err != nil {
		return err
	}
	if err := resolve(sched, d.fns, int64(len(tokens)), &s.reg, &s.b); err != nil {
		return fmt.Errorf("cuda: %s schedule: %w", name, err)
	}
	all := s.b
	for i := range all.launches {
		off := 0
		for _, l := range all.launches[:i] {
			off += int(l.argc)
		}
		one := batch{launches: all.launches[i : i+1], argv: all.argv[off : off+int(all.launches[i].argc)]}
		if err := errors.Join(d.g.launch(&one), d.g.sync()); err != nil {
			return fmt.Errorf("cuda: %s launch %d (%s) at T=%d, pos0=%d: %w", name, i, sched[i].Kernel, len(tokens), s.pos, err)
		}
	}
	return nil
}

// capture records the decode schedule at T = 1 as a graph. Everything that
// changes per token lives in the state block, so the graph is reused as is.
func (s *sequence) capture(sched []plans.Launch) error {
	d := s.d
	if err := resolve(sched, d.fns, 1, &s.reg, &s.b); err != nil {
		return fmt.Errorf("cuda: decode schedule: %w", err)
	}
	if err := d.g.captureBegin(); err != nil {
		return err
	}
	lerr := d.g.launch(&s.b)
	x, err := d.g.captureEnd()
	if lerr != nil {
		if err == nil {
			err = d.g.graphDestroy(x)
		}
		return errors.Join(fmt.Errorf("cuda: capturing the decode graph: %w", lerr), err)
	}
	if err != nil {
		return fmt.Errorf("cuda: capturing the decode graph: %w", err)
	}
	s.decode = x
	return nil
}

// writeState fills the host image of the state block (little-endian int32).
func writeState(b []byte, st *plans.State, tokens []int32, pos0, ctx int) {
	le := binary.LittleEndian
	le.PutUint32(b[st.T:], uint32(len(tokens)))
	le.PutUint32(b[st.Pos0:], uint32(pos0))
	le.PutUint32(b[st.Ctx:], uint32(ctx))
	for i, t := range tokens {
		le.PutUint32(b[st.Tokens+4*int64(i):], uint32(t))
		le.PutUint32(b[st.Positions+4*int64(i):], uint32(pos0+i))
	}
}

// Close frees the KV cache and the graph.
func (s *sequence) Close() error {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.closed {
		return nil
	}
	return s.free()
}

// free releases the sequence's device resources; d.mu is held.
func (s *sequence) free() error {
	d := s.d
	s.closed = true
	var err error
	if s.decode != 0 {
		err = errors.Join(err, d.g.graphDestroy(s.decode))
		s.decode = 0
	}
	if s.logits != nil {
		err = errors.Join(err, d.g.hostFree(s.logits))
		s.logits = nil
	}
	if s.kv != 0 {
		err = errors.Join(err, d.g.sync(), d.g.free(s.kv))
		s.kv = 0
	}
	if _, ok := d.seqs[s]; ok {
		delete(d.seqs, s)
		d.kvLive -= s.kvBytes
	}
	return err
}

package cuda

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
	"github.com/llama-orch/orc/runtime/sample"
)

// sequence is one stream of tokens over a KV cache.
type sequence struct {
	d      *Device
	c      *kvCache
	limit  int // the context asked for; the cache may hold more
	pos    int
	closed bool
	// drew says the last step's graph ended with the sampler, whose pick
	// the state block then holds; replay is the graph of its last decode
	// step (ReplayDecode's).
	drew   bool
	replay graph
}

// NewSequence takes a zeroed KV cache of at least ctxLen tokens (0 means
// the device's context); the sequence may hold ctxLen tokens.
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
	c, err := d.takeCache(ctxLen)
	if err != nil {
		return nil, err
	}
	s := &sequence{d: d, c: c, limit: ctxLen}
	d.seqs[s] = struct{}{}
	return s, nil
}

func (s *sequence) Pos() int { return s.pos }

// Forward runs tokens through the model in steps of at most max_tokens:
// prefill launches for several tokens, the captured decode graph for one.
// The returned logits alias a pinned buffer, valid until the next call.
func (s *sequence) Forward(ctx context.Context, tokens []int32) ([]float32, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if err := s.run(ctx, tokens, nil); err != nil {
		return nil, err
	}
	return s.hostLogits()
}

// run enqueues tokens' steps, whose draw settings are st (nil: none);
// d.mu is held.
func (s *sequence) run(ctx context.Context, tokens []int32, st *sample.Step) error {
	if s.closed {
		return errors.New("cuda: sequence is closed")
	}
	m := &s.d.plan.Manifest
	if len(tokens) == 0 {
		return errors.New("cuda: Forward needs at least one token")
	}
	if s.pos+len(tokens) > s.limit {
		return fmt.Errorf("%w: %d tokens at position %d pass the sequence's context of %d", runtime.ErrContextFull, len(tokens), s.pos, s.limit)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= m.Model.Vocab {
			return fmt.Errorf("cuda: token %d at index %d is outside the vocabulary of %d", t, i, m.Model.Vocab)
		}
	}
	for len(tokens) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(tokens), m.Memory.MaxTokens)
		if err := s.step(tokens[:n], st); err != nil {
			return err
		}
		s.pos += n
		tokens = tokens[n:]
	}
	return nil
}

// ReplayDecode replays the graph of the sequence's last decode step n times
// back to back (the decode graph, or with the sampler's draw after it), the
// step state unchanged (the same token at its position, whose cache rows
// each replay rewrites alike), then waits: a decode step's GPU time without
// the host's work between steps, for benchmarks (orcrun bench). ok is false
// where the state block does not hold this sequence's decode step: another sequence stepped since, or its
// last step was a prefill, or launches are synchronised one at a time
// (Options.SyncEachLaunch).
func (s *sequence) ReplayDecode(n int) (ok bool, err error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if s.closed || s.d.replayable != s {
		return false, nil
	}
	for range n {
		if err := s.d.g.graphLaunch(s.replay); err != nil {
			return false, err
		}
	}
	return true, s.d.g.sync()
}

// hostLogits copies the last step's logits into the pinned buffer, once
// the queued work is done.
func (s *sequence) hostLogits() ([]float32, error) {
	m := &s.d.plan.Manifest
	if err := s.d.g.copyDtoH(s.c.logits, devptr(s.c.reg.arena+uint64(m.Kernels.Logits))); err != nil {
		return nil, err
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&s.c.logits[0])), m.Model.Vocab), nil
}

// step enqueues one step of len(tokens) tokens: the state block (with the
// draw settings st), then a decode graph (one token; with the sampler's
// draw where st needs it) or the prefill launches.
func (s *sequence) step(tokens []int32, st *sample.Step) error {
	d, c := s.d, s.c
	k := d.plan.Manifest.Kernels
	decode := len(tokens) == 1 && len(k.Decode) > 0
	draws := decode && d.drawsAfterHead(st)
	x := &c.decode
	if draws {
		x = &c.decodeDraw
	}
	if decode && *x == 0 && !d.syncEach {
		// Captured before any work of this step is queued, so the graph
		// holds the kernels alone.
		if err := s.capture(d.decode, draws, x); err != nil {
			return err
		}
	}
	// The previous step's state copy may still be queued: wait before
	// rewriting its pinned source.
	if err := d.g.sync(); err != nil {
		return err
	}
	d.replayable, s.drew = nil, false
	writeState(d.state, &k.State, tokens, s.pos, c.ctx, st, decode && k.State.HeadPicks)
	if err := d.g.copyHtoD(devptr(c.reg.state), d.state); err != nil {
		return err
	}
	name, sched := "prefill", k.Prefill
	if decode {
		if !d.syncEach {
			d.replayable, s.replay, s.drew = s, *x, draws
			return d.g.graphLaunch(*x)
		}
		name, sched = "decode", d.decode
	}
	return d.runSchedule(name, sched, int64(len(tokens)), 0, s.pos, &c.reg, &c.b)
}

// runSchedule resolves sched for T tokens whose queries see at most keys
// keys (0: unknown) over regions r into b and
// launches it, or with Options.SyncEachLaunch one launch at a time,
// synchronised, so that a faulting kernel is named (with the step's first
// position pos0; -1: a batched step, of several).
func (d *Device) runSchedule(name string, sched []plans.Launch, T, keys int64, pos0 int, r *regions, b *batch) error {
	if err := resolve(sched, d.fns, T, keys, r, b); err != nil {
		return fmt.Errorf("cuda: %s schedule: %w", name, err)
	}
	if !d.syncEach {
		return d.g.launch(b)
	}
	if d.profile != nil {
		d.profile.step(name)
	}
	off := 0
	for i, l := range b.launches {
		one := batch{launches: b.launches[i : i+1], argv: b.argv[off : off+int(l.argc)]}
		off += int(l.argc)
		var err error
		if d.profile != nil {
			err = d.timeLaunch(name, sched[i].Kernel, &one)
		} else {
			err = d.g.launch(&one)
		}
		if err := errors.Join(err, d.g.sync()); err != nil {
			at := fmt.Sprintf("T=%d, pos0=%d", T, pos0)
			if pos0 < 0 {
				at = fmt.Sprintf("T=%d", T)
			}
			return fmt.Errorf("cuda: %s launch %d (%s) at %s: %w", name, i, sched[i].Kernel, at, err)
		}
	}
	return nil
}

// capture records the decode schedule at T = 1 as a graph into x, with
// draw the sampler's launch after it. Everything that changes per token
// (the draw settings too) lives in the state block, so the graph is reused
// as is.
func (s *sequence) capture(sched []plans.Launch, draw bool, x *graph) error {
	d, c := s.d, s.c
	if err := resolve(sched, d.fns, 1, 0, &c.reg, &c.b); err != nil {
		return fmt.Errorf("cuda: decode schedule: %w", err)
	}
	if draw {
		c.b.launches = append(c.b.launches, d.sampling.rec)
		c.b.argv = append(c.b.argv, s.samplerArgs()...)
	}
	if err := d.g.captureBegin(); err != nil {
		return err
	}
	lerr := d.g.launch(&c.b)
	captured, err := d.g.captureEnd()
	if lerr != nil {
		if err == nil {
			err = d.g.graphDestroy(captured)
		}
		return errors.Join(fmt.Errorf("cuda: capturing the decode graph: %w", lerr), err)
	}
	if err != nil {
		return fmt.Errorf("cuda: capturing the decode graph: %w", err)
	}
	*x = captured
	return nil
}

// writeState fills the host image of the state block (little-endian int32)
// with the step and its draw settings st, and zeroes its picks, which the
// step's LM head (headKeyed: writeStep) and sampler then fill.
func writeState(b []byte, st *plans.State, tokens []int32, pos0, ctx int, draw *sample.Step, headKeyed bool) {
	if st.Greedy != 0 {
		clear(b[st.Greedy : st.Greedy+picksBytes])
	}
	if st.Sample != 0 {
		writeStep(b[st.Sample:], draw, headKeyed)
	}
	le := binary.LittleEndian
	le.PutUint32(b[st.T:], uint32(len(tokens)))
	le.PutUint32(b[st.Pos0:], uint32(pos0))
	le.PutUint32(b[st.Ctx:], uint32(ctx))
	for i, t := range tokens {
		le.PutUint32(b[st.Tokens+4*int64(i):], uint32(t))
		le.PutUint32(b[st.Positions+4*int64(i):], uint32(pos0+i))
	}
}

// Close parks the sequence's cache for the next sequence, or frees it.
func (s *sequence) Close() error {
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	delete(d.seqs, s)
	if d.closed {
		return nil
	}
	return d.parkCache(s.c)
}

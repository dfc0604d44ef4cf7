package cuda

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime/sample"
)

// sampling holds a device's GPU sampler (plans.Sampler): its kernel and the
// scratch its blocks meet in. Sequences share it under d.mu.
type sampling struct {
	k       *plans.Sampler
	rec     launchRec
	scratch devptr
}

// loadSampler sets up the plan's sampler, if it has one; d.mu is held or
// the device is not yet shared.
func (d *Device) loadSampler(k *plans.Sampler) error {
	if k == nil {
		return nil
	}
	if sms := int(d.g.d.sm_count); k.Draw.Grid < 1 || k.Draw.Grid > sms || k.Draw.Block < 1 || k.Draw.Block > 1024 || k.ScratchBytes < 1 {
		return fmt.Errorf("cuda: plan %s: sampler %s with grid %d, block %d, scratch %d B does not fit this GPU's %d SMs",
			d.plan.Dir, k.Draw.Kernel, k.Draw.Grid, k.Draw.Block, k.ScratchBytes, sms)
	}
	fn, err := d.g.function(d.mod, k.Draw.Kernel, 0)
	if err != nil {
		return err
	}
	scratch, err := d.g.alloc(k.ScratchBytes)
	if err != nil {
		return d.outOfMemory(err, k.ScratchBytes, "the sampler's scratch")
	}
	d.sampling = &sampling{k: k, scratch: scratch,
		rec: launchRec{fn: fn, grid: [3]uint32{uint32(k.Draw.Grid), 1, 1}, block: [3]uint32{uint32(k.Draw.Block), 1, 1}, argc: 3}}
	return d.g.memset(scratch, 0, k.ScratchBytes)
}

// freeSampler releases what loadSampler made.
func (d *Device) freeSampler() error {
	sp := d.sampling
	if sp == nil {
		return nil
	}
	d.sampling = nil
	return d.g.free(sp.scratch)
}

// ForwardSample runs tokens like Forward and returns the token sm.Sample
// would draw from the step's logits with recent (runtime.SamplingSequence):
// the LM head's pick where the step is greedy or a plain draw, else the
// sampler's; the logits come to the host only for a plan without a
// sampler.
func (s *sequence) ForwardSample(ctx context.Context, tokens []int32, sm *sample.Sampler, recent []int32) (int32, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	st := sm.Step(recent, s.pos+len(tokens), s.d.plan.Manifest.Model.Vocab)
	if err := s.run(ctx, tokens, &st); err != nil {
		return -1, err
	}
	if s.d.sampling == nil {
		logits, err := s.hostLogits()
		if err != nil {
			return -1, err
		}
		return sm.Sample(logits, recent, s.pos), nil
	}
	return s.pick(&st)
}

// drawsAfterHead says a decode step with the draw settings st (nil: none,
// the logits go to the host) needs the sampler after the LM head: the plan
// has one, and its head leaves no pick for st (a greedy step or a plain
// draw, plans.State.HeadPicks). Such steps run the decode graph that ends
// with the sampler.
func (d *Device) drawsAfterHead(st *sample.Step) bool {
	if d.sampling == nil || st == nil {
		return false
	}
	return !d.plan.Manifest.Kernels.State.HeadPicks || !(st.Greedy() || st.Plain())
}

// pick returns the token of the last step, whose settings were st: the
// draw of the sampler its graph ended with, or the LM head's pick where
// the plan's head leaves it and the step is greedy or a plain draw over
// finite logits, else the sampler's, launched now; d.mu is held.
func (s *sequence) pick(st *sample.Step) (int32, error) {
	if s.drew {
		return s.drawn()
	}
	if s.d.plan.Manifest.Kernels.State.HeadPicks && (st.Greedy() || st.Plain()) {
		p, err := s.picks()
		if err != nil {
			return -1, err
		}
		switch {
		case p.bad:
		case st.Greedy() && p.greedy != 0:
			return sample.KeyID(p.greedy), nil
		case st.Plain() && p.drawn != 0:
			return sample.KeyID(p.drawn), nil
		}
	}
	return s.sampleOnGPU()
}

// samplerArgs are the sampler's arguments for this sequence: its logits,
// its state block, the scratch.
func (s *sequence) samplerArgs() []uint64 {
	d := s.d
	return []uint64{s.c.reg.arena + uint64(d.plan.Manifest.Kernels.Logits), s.c.reg.state, uint64(d.sampling.scratch)}
}

// sampleOnGPU launches the sampler over the last step's logits with the
// settings the state block holds and returns its pick.
func (s *sequence) sampleOnGPU() (int32, error) {
	d := s.d
	sp := d.sampling
	if err := d.g.launch(&batch{launches: []launchRec{sp.rec}, argv: s.samplerArgs()}); err != nil {
		return -1, fmt.Errorf("cuda: sampling: %w", err)
	}
	return s.drawn()
}

// drawn returns the sampler's pick from the state block once the queued
// work (its launch) is done.
func (s *sequence) drawn() (int32, error) {
	p, err := s.picks()
	if err != nil {
		return -1, err
	}
	if p.drawn == 0 {
		return -1, fmt.Errorf("cuda: the sampler %s left no pick", s.d.sampling.k.Draw.Kernel)
	}
	return sample.KeyID(p.drawn), nil
}

// stepPicks are the state block's picks (plans.State.Greedy): the greedy
// key, whether a logit was not finite, the draw key, and the key over the
// finite logits no penalty touches (a draw with penalties, but top-k up
// to 64's).
type stepPicks struct {
	greedy uint64
	bad    bool
	drawn  uint64
	free   uint64
}

// picks copies the state block's picks back once the queued work is done.
func (s *sequence) picks() (stepPicks, error) {
	b := s.c.logits[:picksBytes] // pinned; the logits' buffer, rewritten by the next hostLogits
	if err := s.d.g.copyDtoH(b, devptr(s.c.reg.state+uint64(s.d.plan.Manifest.Kernels.State.Greedy))); err != nil {
		return stepPicks{}, err
	}
	le := binary.LittleEndian
	return stepPicks{greedy: le.Uint64(b), bad: le.Uint32(b[8:]) != 0, drawn: le.Uint64(b[16:]), free: le.Uint64(b[24:])}, nil
}

// picksBytes is what the state block's picks hold: a u64 key, an int32
// flag and padding, two u64 keys.
const picksBytes = 32

// writeStep fills the state block's draw settings (plans.SampleStepBytes
// at b) with st, or zeroes them (greedy, nothing to draw) for nil;
// headKeyed says the step's LM head leaves its picks (a decode step of a
// plan whose head does, plans.State.HeadPicks), from which the sampler
// then takes the largest logit without a barrier of its own.
func writeStep(b []byte, st *sample.Step, headKeyed bool) {
	clear(b[:plans.SampleStepBytes])
	if st == nil {
		return
	}
	le := binary.LittleEndian
	f := func(off int, v float32) { le.PutUint32(b[off:], math.Float32bits(v)) }
	f(0, st.Temperature)
	le.PutUint32(b[4:], uint32(st.TopK))
	f(8, st.TopP)
	f(12, st.MinP)
	f(16, st.Repetition)
	f(20, st.Frequency)
	f(24, st.Presence)
	le.PutUint32(b[28:], uint32(len(st.Penalised)))
	le.PutUint64(b[32:], st.Key)
	if st.Plain() {
		le.PutUint32(b[40:], 1)
	}
	if headKeyed {
		le.PutUint32(b[44:], 1)
	}
	for i, p := range st.Penalised {
		le.PutUint32(b[48+4*i:], uint32(p.ID))
		le.PutUint32(b[48+4*(plans.SampleRecent+i):], uint32(p.Count))
	}
}

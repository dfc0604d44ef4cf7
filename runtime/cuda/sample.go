package cuda

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime/sample"
)

// sampling holds a device's GPU sampler (plans.Sampler): its kernels, one
// device buffer and one pinned host buffer for the in and out blocks, and
// the two resolved batches. Sequences share it under d.mu.
type sampling struct {
	k     *plans.Sampler
	mem   devptr // [in | out | part u64 [Blocks] | bad i32 [Blocks] | psum f64 [Blocks] | lt f32 [vocab]]
	bytes int64
	// host is the pinned image of in, then out.
	host              []byte
	inBytes, outBytes int
	greedy, draw      batch
}

// outHeader is the out block's fixed part: best id, non-finite seen,
// candidates n, 0, the f64 sum.
const outHeader = 32

// loadSampler sets up the plan's sampler, if it has one; d.mu is held or
// the device is not yet shared.
func (d *Device) loadSampler(k *plans.Sampler) error {
	if k == nil {
		return nil
	}
	vocab := int64(d.plan.Manifest.Model.Vocab)
	if k.Blocks < 1 || k.Candidates < 1 || k.Recent < 0 {
		return fmt.Errorf("cuda: plan %s: sampler with %d blocks, %d candidates, %d recent ids", d.plan.Dir, k.Blocks, k.Candidates, k.Recent)
	}
	sp := &sampling{k: k, inBytes: 4 * (4 + k.Recent), outBytes: outHeader + 8*k.Candidates}
	blocks := int64(k.Blocks)
	in := int64(0)
	out := align(int64(sp.inBytes))
	part := out + align(int64(sp.outBytes))
	bad := part + align(8*blocks)
	psum := bad + align(4*blocks)
	lt := psum + align(8*blocks)
	bytes := lt + align(4*vocab)
	var err error
	if sp.mem, err = d.g.alloc(bytes); err != nil {
		return d.outOfMemory(err, bytes, "the sampler's buffers")
	}
	sp.bytes = bytes
	d.sampling = sp
	if sp.host, err = d.g.hostAlloc(sp.inBytes + sp.outBytes); err != nil {
		return err
	}
	at := func(off int64) uint64 { return uint64(sp.mem) + uint64(off) }
	logits := d.reg.arena + uint64(d.plan.Manifest.Kernels.Logits)
	launches := []struct {
		k    plans.SampleKernel
		args []uint64
	}{
		{k.Prep, []uint64{logits, at(in), at(lt), at(part), at(bad)}},
		{k.Argmax, []uint64{at(part), at(bad), at(out)}},
		{k.Weights, []uint64{at(lt), at(out), at(psum)}},
		{k.Select, []uint64{at(lt), at(psum), at(out)}},
	}
	for i, l := range launches {
		if l.k.Grid < 1 || l.k.Block < 1 || l.k.Block > 1024 {
			return fmt.Errorf("cuda: plan %s: sampler kernel %s has grid %d, block %d", d.plan.Dir, l.k.Kernel, l.k.Grid, l.k.Block)
		}
		fn, err := d.g.function(d.mod, l.k.Kernel, 0)
		if err != nil {
			return err
		}
		rec := launchRec{fn: fn, grid: [3]uint32{uint32(l.k.Grid), 1, 1}, block: [3]uint32{uint32(l.k.Block), 1, 1}, argc: uint32(len(l.args))}
		if i < 2 {
			sp.greedy.launches = append(sp.greedy.launches, rec)
			sp.greedy.argv = append(sp.greedy.argv, l.args...)
		}
		sp.draw.launches = append(sp.draw.launches, rec)
		sp.draw.argv = append(sp.draw.argv, l.args...)
	}
	return nil
}

// freeSampler releases what loadSampler made.
func (d *Device) freeSampler() error {
	sp := d.sampling
	if sp == nil {
		return nil
	}
	d.sampling = nil
	var err error
	if sp.host != nil {
		err = d.g.hostFree(sp.host)
	}
	if sp.mem != 0 {
		err = errors.Join(err, d.g.free(sp.mem))
	}
	return err
}

// ForwardSample runs tokens like Forward and returns the token sm.Sample
// would draw from the step's logits with recent (runtime.SamplingSequence).
// On the GPU: greedy decoding copies back the argmax's id, a draw the
// sorted prefix that sm.SampleFromPrefix finishes; the logits come to the
// host only when that cannot prove its token, when a logit is not finite
// (the CPU's handling of NaN decides then), or for a plan without a sampler.
func (s *sequence) ForwardSample(ctx context.Context, tokens []int32, sm *sample.Sampler, recent []int32) (int32, error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if err := s.run(ctx, tokens); err != nil {
		return -1, err
	}
	return s.sampleLast(sm, recent)
}

// sampleLast samples the last step's logits; d.mu is held.
func (s *sequence) sampleLast(sm *sample.Sampler, recent []int32) (int32, error) {
	if id, ok, err := s.headGreedy(sm); err != nil || ok {
		return id, err
	}
	if sp := s.d.sampling; sp != nil && len(recent) <= sp.k.Recent {
		id, ok, err := s.sampleOnGPU(sp, sm, recent)
		if err != nil || ok {
			return id, err
		}
	}
	logits, err := s.hostLogits()
	if err != nil {
		return -1, err
	}
	return sm.Sample(logits, recent), nil
}

// headGreedy reads the greedy pick the step's LM head left in the state
// block (plans.State.Greedy) when sm decodes greedily without a penalty:
// one 12-byte copy and no launch. ok is false when the plan's head leaves
// none, when this step's head did not (a prefill head on another path), or
// when a logit was not finite, which the sampler path hands to the host.
func (s *sequence) headGreedy(sm *sample.Sampler) (id int32, ok bool, err error) {
	p := sm.Params()
	g := s.d.plan.Manifest.Kernels.State.Greedy
	if g == 0 || p.Temperature != 0 || (p.RepetitionPenalty != 0 && p.RepetitionPenalty != 1) {
		return -1, false, nil
	}
	b := s.c.logits[:greedyBytes] // pinned; the logits' buffer, rewritten by the next hostLogits
	if err := s.d.g.copyDtoH(b, devptr(s.c.reg.state+uint64(g))); err != nil {
		return -1, false, err
	}
	key, bad := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint32(b[8:])
	if key == 0 || bad != 0 {
		return -1, false, nil
	}
	return int32(0xFFFFFFFF - uint32(key)), true, nil
}

// greedyBytes is what the state block's greedy slot holds: a u64 key, an
// int32 flag.
const greedyBytes = 12

// sampleOnGPU runs the sampler over the last step's logits; ok is false
// when the host must sample from the whole logits.
func (s *sequence) sampleOnGPU(sp *sampling, sm *sample.Sampler, recent []int32) (id int32, ok bool, err error) {
	d := s.d
	p := sm.Params()
	rp := p.RepetitionPenalty
	if rp == 0 || rp == 1 { // off (sample.Sampler.penalise)
		rp, recent = 1, nil
	}
	le := binary.LittleEndian
	in := sp.host[:sp.inBytes]
	le.PutUint32(in[0:], uint32(len(recent)))
	le.PutUint32(in[4:], math.Float32bits(rp))
	le.PutUint32(in[8:], math.Float32bits(p.Temperature))
	le.PutUint32(in[12:], 0)
	for i, t := range recent {
		le.PutUint32(in[16+4*i:], uint32(t))
	}
	mem := uint64(sp.mem)
	if err := d.g.copyHtoD(devptr(mem), in[:16+4*len(recent)]); err != nil {
		return -1, false, err
	}
	b := &sp.draw
	if p.Temperature == 0 {
		b = &sp.greedy
	}
	if err := d.g.launch(b); err != nil {
		return -1, false, fmt.Errorf("cuda: sampling: %w", err)
	}
	out := sp.host[sp.inBytes:]
	if p.Temperature == 0 {
		out = out[:8] // the id and the non-finite flag
	}
	if err := d.g.copyDtoH(out, devptr(mem+uint64(align(int64(sp.inBytes))))); err != nil {
		return -1, false, err
	}
	if le.Uint32(out[4:]) != 0 {
		return -1, false, nil
	}
	if p.Temperature == 0 {
		return int32(le.Uint32(out)), true, nil
	}
	n := int(le.Uint32(out[8:]))
	c := sp.k.Candidates
	if n < 1 || n > c {
		return -1, false, nil
	}
	pre := sample.Prefix{IDs: make([]int32, n), Logits: make([]float32, n),
		Vocab: d.plan.Manifest.Model.Vocab, Sum: math.Float64frombits(le.Uint64(out[16:]))}
	for i := range n {
		pre.IDs[i] = int32(le.Uint32(out[outHeader+4*i:]))
		pre.Logits[i] = math.Float32frombits(le.Uint32(out[outHeader+4*(c+i):]))
	}
	id, ok = sm.SampleFromPrefix(pre)
	return id, ok, nil
}

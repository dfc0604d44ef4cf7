package cuda

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

// Device is a plan loaded on one GPU.
type Device struct {
	plan  *plans.Plan
	g     *gpu
	ctx   int // the context a Sequence may reach
	chunk int

	// mu serialises work on the one stream: steps of all sequences, and
	// allocations that must not interleave with a capture.
	mu sync.Mutex

	// One allocation: [weights | activation arena | step state], each
	// Alignment-aligned. reg holds those bases; kv is per sequence.
	arena      devptr
	arenaBytes int64
	reg        regions

	mod   module
	fns   map[string]uint64
	state []byte // pinned host image of the step-state block
	// replayable is the sequence whose decode step the state block holds
	// (the last step enqueued, if a decode graph's): ReplayDecode's.
	replayable *sequence

	sampling *sampling // nil when the plan has no GPU sampler

	seqs    map[*sequence]struct{}
	idle    []*kvCache // caches of closed sequences, for reuse
	kvBytes int64      // VRAM of all caches, live and idle

	info   runtime.Info
	upload time.Duration
	// uploadBuffers is Options.UploadBuffers or its default.
	uploadBuffers int
	syncEach      bool           // Options.SyncEachLaunch (or a profile)
	profile       *launchProfile // Options.ProfileFile's, or nil
	decode        []plans.Launch // the plan's decode schedule less Options.SkipDecode
	closed        bool
	batch         *Batch // the open batch (NewBatch), if any
}

// Open loads p onto GPU number gpu: checks the plan, allocates the arena
// (failing with ErrOutOfMemory, required and available bytes when the
// weights, activations and one KV cache of o.Ctx tokens do not fit), uploads
// the weights, loads the kernels and verifies residency. On success the
// device owns p: the weights are unmapped once they are on the GPU (the
// manifest stays), and Close closes p. On failure p stays the caller's.
func Open(p *plans.Plan, gpu int, o Options) (*Device, error) {
	m := &p.Manifest
	if err := checkPlan(p, o); err != nil {
		return nil, err
	}
	d := &Device{plan: p, ctx: o.Ctx, chunk: o.ChunkBytes, fns: map[string]uint64{}, seqs: map[*sequence]struct{}{},
		syncEach: o.SyncEachLaunch || os.Getenv("ORC_CUDA_SYNC") == "1"}
	if d.ctx == 0 {
		d.ctx = m.Model.ContextLength
	}
	skip := o.SkipDecode
	if env := os.Getenv("ORC_CUDA_SKIP_DECODE"); env != "" {
		skip = append(append([]string(nil), skip...), strings.Split(env, ",")...)
	}
	d.decode = skipped(m.Kernels.Decode, skip)
	if n := len(m.Kernels.Decode) - len(d.decode); n > 0 {
		fmt.Fprintf(os.Stderr, "cuda: %d of %d decode launches left out (%s): outputs are meaningless, timing only\n", n, len(m.Kernels.Decode), strings.Join(skip, ","))
	}
	if d.chunk == 0 {
		d.chunk = DefaultChunkBytes
	}
	if d.uploadBuffers = o.UploadBuffers; d.uploadBuffers == 0 {
		d.uploadBuffers = DefaultUploadBuffers
	}
	g, err := openGPU(gpu)
	if err != nil {
		return nil, err
	}
	d.g = g
	if err := d.startProfile(o); err != nil {
		return nil, errors.Join(err, d.release())
	}
	if err := d.load(p, g.faults.killDuringLoad(o.Progress)); err != nil {
		return nil, errors.Join(err, d.release())
	}
	return d, nil
}

// checkPlan refuses, before touching the GPU, a plan this runtime cannot run.
func checkPlan(p *plans.Plan, o Options) error {
	m := &p.Manifest
	k := m.Kernels
	if k == nil {
		return fmt.Errorf("cuda: plan %s targets %q and has no GPU kernels; compile it with orcc for a CUDA arch (e.g. --arch sm_90)", p.Dir, m.Target)
	}
	if int64(len(p.Weights)) != m.Memory.WeightBytes {
		return fmt.Errorf("cuda: plan %s is not open: %d of %d weight bytes mapped", p.Dir, len(p.Weights), m.Memory.WeightBytes)
	}
	if o.Ctx < 0 || o.Ctx > m.Model.ContextLength {
		return fmt.Errorf("cuda: context %d is outside 1..%d (the model's context length)", o.Ctx, m.Model.ContextLength)
	}
	if o.ChunkBytes < 0 {
		return fmt.Errorf("cuda: upload chunk size %d is negative", o.ChunkBytes)
	}
	if o.UploadBuffers != 0 && (o.UploadBuffers < MinUploadBuffers || o.UploadBuffers > MaxUploadBuffers) {
		return fmt.Errorf("cuda: %d upload buffers: use %d to %d", o.UploadBuffers, MinUploadBuffers, MaxUploadBuffers)
	}
	if m.Memory.MaxTokens < 1 {
		return fmt.Errorf("cuda: plan %s has max_tokens %d", p.Dir, m.Memory.MaxTokens)
	}
	if len(k.Prefill) == 0 {
		return fmt.Errorf("cuda: plan %s has no prefill schedule", p.Dir)
	}
	maxT := int64(m.Memory.MaxTokens)
	st := k.State
	for _, f := range []struct {
		name      string
		off, size int64
	}{{"t", st.T, 4}, {"pos0", st.Pos0, 4}, {"ctx", st.Ctx, 4}, {"tokens", st.Tokens, 4 * maxT}, {"positions", st.Positions, 4 * maxT}} {
		if f.off < 0 || f.off+f.size > st.Bytes {
			return fmt.Errorf("cuda: plan %s: state field %s [%d, +%d) lies outside the %d-byte state block", p.Dir, f.name, f.off, f.size, st.Bytes)
		}
	}
	if st.Greedy != 0 && (st.Greedy < 0 || st.Greedy%8 != 0 || st.Greedy+picksBytes > st.Bytes) {
		return fmt.Errorf("cuda: plan %s: state field greedy at %d is not an 8-byte aligned slot of %d bytes inside the %d-byte state block", p.Dir, st.Greedy, picksBytes, st.Bytes)
	}
	if k.Sampler != nil && st.Greedy == 0 {
		return fmt.Errorf("cuda: plan %s: the sampler has no picks slot in the state block", p.Dir)
	}
	if k.Sampler != nil && (st.Sample <= 0 || st.Sample%16 != 0 || st.Sample+plans.SampleStepBytes > st.Bytes) {
		return fmt.Errorf("cuda: plan %s: the sampler's settings at %d are not a 16-byte aligned field of %d bytes inside the %d-byte state block", p.Dir, st.Sample, plans.SampleStepBytes, st.Bytes)
	}
	if lb := 4 * int64(m.Model.Vocab); k.Logits < 0 || k.Logits+lb > m.Memory.ArenaBytes {
		return fmt.Errorf("cuda: plan %s: logits [%d, +%d) lie outside the %d-byte arena", p.Dir, k.Logits, lb, m.Memory.ArenaBytes)
	}
	if err := checkSchedule("prefill", k.Prefill, maxT); err != nil {
		return fmt.Errorf("cuda: plan %s: %w", p.Dir, err)
	}
	if err := checkSchedule("decode", k.Decode, 1); err != nil {
		return fmt.Errorf("cuda: plan %s: %w", p.Dir, err)
	}
	if err := checkBatch(k, m); err != nil {
		return fmt.Errorf("cuda: plan %s: %w", p.Dir, err)
	}
	return nil
}

// load does the GPU part of Open; on error the caller releases what it made.
func (d *Device) load(p *plans.Plan, progress func(int)) error {
	m := &p.Manifest
	if err := d.checkArch(m.Kernels.Arch); err != nil {
		return err
	}
	wB, aB, sB := align(int64(len(p.Weights))), align(m.Memory.ArenaBytes), align(m.Kernels.State.Bytes)
	d.arenaBytes = wB + aB + sB
	need := d.arenaBytes + kvBytes(&m.Model, d.ctx)
	if err := d.fits(need, "the weights, activations and one KV cache of "+strconv.Itoa(d.ctx)+" tokens"); err != nil {
		return err
	}
	arena, err := d.g.alloc(d.arenaBytes)
	if err != nil {
		return d.outOfMemory(err, d.arenaBytes, "the arena")
	}
	d.arena = arena
	d.reg = regions{
		weights: uint64(arena), weightBytes: int64(len(p.Weights)),
		arena: uint64(arena) + uint64(wB), arenaBytes: m.Memory.ArenaBytes,
		state: uint64(arena) + uint64(wB+aB), stateBytes: m.Kernels.State.Bytes,
	}
	start := time.Now()
	// A deferred hash (plans.OpenOptions.DeferWeightHash) runs beside the
	// upload: both read the same memory map, and nothing runs on the
	// weights before both are done.
	verified := make(chan error, 1)
	go func() { verified <- p.VerifyWeights() }()
	uerr := d.g.upload(arena, p.Weights, d.chunk, d.uploadBuffers, progress)
	if err := <-verified; err != nil {
		return err
	}
	if uerr != nil {
		return fmt.Errorf("cuda: uploading %s: %w", plans.WeightsFile, uerr)
	}
	d.upload = time.Since(start)
	// The host copy is no longer needed; the page cache keeps it warm for
	// the next load.
	if err := p.Close(); err != nil {
		return err
	}
	// Kernels may accumulate into the arena; start from a known state.
	if err := d.g.memset(arena+devptr(wB), 0, aB+sB); err != nil {
		return err
	}
	if err := d.loadKernels(p); err != nil {
		return err
	}
	if err := d.loadSampler(m.Kernels.Sampler); err != nil {
		return err
	}
	d.g.setProgrammatic(m.Kernels.GridDepWait)
	if d.state, err = d.g.hostAlloc(int(max(m.Kernels.State.Bytes, 1))); err != nil {
		return err
	}
	if err := d.checkResidency(); err != nil {
		return err
	}
	d.info = runtime.Info{
		Model: m.Model.Name, Arch: m.Model.Arch, QuantKind: m.Model.FileType,
		Device: "cuda:" + strconv.Itoa(int(d.g.d.ordinal)), DeviceName: d.g.name(), SM: d.g.sm(),
		CUDAVersion:   fmt.Sprintf("%d.%d", d.g.driverVersion()/1000, d.g.driverVersion()%1000/10),
		Vocab:         m.Model.Vocab,
		ContextLength: d.ctx,
		MaxTokens:     m.Memory.MaxTokens,
		Resident:      true,
	}
	return d.g.sync()
}

// checkArch refuses a plan compiled for a newer GPU generation than this one;
// the driver would only say "no kernel image".
func (d *Device) checkArch(arch string) error {
	digits := strings.TrimPrefix(strings.TrimSuffix(arch, "a"), "sm_")
	want, err := strconv.Atoi(digits)
	if err != nil || want < 10 {
		return fmt.Errorf("cuda: plan %s has kernel arch %q, not sm_XY", d.plan.Dir, arch)
	}
	if have := int(d.g.d.cc_major)*10 + int(d.g.d.cc_minor); have/10 < want/10 {
		return fmt.Errorf("cuda: plan %s is compiled for %s; GPU %d (%s) is %s: recompile with orcc --arch %s", d.plan.Dir, arch, d.g.d.ordinal, d.g.name(), d.g.sm(), d.g.sm())
	}
	return nil
}

// loadKernels loads the module and looks up every kernel the schedules name.
func (d *Device) loadKernels(p *plans.Plan) error {
	image, err := p.ReadFile(plans.KernelsFile)
	if err != nil {
		return err
	}
	if d.mod, err = d.g.moduleLoad(image); err != nil {
		return fmt.Errorf("cuda: loading %s: %w", plans.KernelsFile, err)
	}
	for name, s := range kernelSmem(p.Manifest.Kernels) {
		if d.fns[name], err = d.g.function(d.mod, name, s); err != nil {
			return err
		}
	}
	return nil
}

// kernelSmem is the kernels every schedule of k names, each with the most
// dynamic shared memory a launch of it takes.
func kernelSmem(k *plans.Kernels) map[string]int {
	smem := map[string]int{}
	for _, sched := range [][]plans.Launch{k.Prefill, k.Decode, k.Batch, k.BatchDecode, k.BatchFew, k.BatchRows} {
		for _, l := range sched {
			smem[l.Kernel] = max(smem[l.Kernel], l.Smem)
		}
	}
	return smem
}

// fits fails early, with the numbers, when need bytes exceed free VRAM.
func (d *Device) fits(need int64, what string) error {
	free, _, err := d.g.memInfo()
	if err != nil {
		return err
	}
	if need > free {
		return fmt.Errorf("%w: plan %s needs %d bytes (%.2f GiB) for %s; GPU %d (%s) has %d bytes (%.2f GiB) free",
			runtime.ErrOutOfMemory, d.plan.Dir, need, gib(need), what, d.g.d.ordinal, d.g.name(), free, gib(free))
	}
	return nil
}

// outOfMemory rewords a failed allocation with required and available bytes.
func (d *Device) outOfMemory(err error, need int64, what string) error {
	free, _, ierr := d.g.memInfo()
	if ierr != nil {
		free = -1
	}
	return fmt.Errorf("%w: plan %s: allocating %d bytes (%.2f GiB) for %s on GPU %d (%s), %d bytes free",
		err, d.plan.Dir, need, gib(need), what, d.g.d.ordinal, d.g.name(), free)
}

func gib(n int64) float64 { return float64(n) / (1 << 30) }

// Info describes the loaded plan and the GPU.
func (d *Device) Info() runtime.Info {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := d.info
	i.VRAMBytesUsed = d.arenaBytes + d.kvBytes
	if d.sampling != nil {
		i.VRAMBytesUsed += d.sampling.k.ScratchBytes
	}
	return i
}

// UploadTime is how long the weight upload took inside Open.
func (d *Device) UploadTime() time.Duration { return d.upload }

// MemInfo reports the GPU's free and total memory now.
func (d *Device) MemInfo() (free, total int64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.g.memInfo()
}

// CheckResidency asks the driver about the first and last weight byte: both
// must be plain device memory of this GPU (never managed memory).
func (d *Device) CheckResidency() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errors.New("cuda: device is closed")
	}
	return d.checkResidency()
}

func (d *Device) checkResidency() error {
	for _, p := range []devptr{d.arena, d.arena + devptr(max(d.reg.weightBytes, 1)-1)} {
		pi, err := d.g.pointerInfo(p)
		if err != nil {
			return fmt.Errorf("cuda: residency check: %w", err)
		}
		if pi.MemoryType != memoryTypeDevice || pi.Managed || pi.Ordinal != int(d.g.d.ordinal) {
			return fmt.Errorf("cuda: weights at %#x are not resident device memory of GPU %d: memory type %d, managed %v, device %d",
				uint64(p), d.g.d.ordinal, pi.MemoryType, pi.Managed, pi.Ordinal)
		}
	}
	return nil
}

// Close frees every sequence, the kernels, the arena and the context.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	var err error
	for s := range d.seqs {
		s.closed = true
		err = errors.Join(err, d.freeCache(s.c))
	}
	if d.batch != nil {
		err = errors.Join(err, d.batch.free())
	}
	d.seqs = nil
	return errors.Join(err, d.freeIdle(), d.release(), d.plan.Close())
}

// release frees what load made, in reverse, and closes the GPU.
func (d *Device) release() error {
	d.closed = true
	err := errors.Join(d.stopProfile(), d.freeSampler())
	if d.state != nil {
		err = errors.Join(err, d.g.hostFree(d.state))
		d.state = nil
	}
	if d.mod != 0 {
		err = errors.Join(err, d.g.moduleUnload(d.mod))
		d.mod = 0
	}
	if d.arena != 0 {
		err = errors.Join(err, d.g.free(d.arena))
		d.arena = 0
	}
	return errors.Join(err, d.g.close())
}

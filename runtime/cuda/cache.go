package cuda

import (
	"errors"
	"fmt"
	"slices"

	"github.com/llama-orch/orc/runtime"
)

// kvCache is what a sequence holds on the GPU: its KV cache
// [n_layer][2][ctx][n_head_kv*head_dim] fp16, the decode graphs captured
// over it (each 0 until the first decode step that takes it), its pinned
// logits buffer f32 [vocab] and a reusable launch batch. A closed sequence
// parks its cache on the device's idle list, so a later sequence that fits
// in it skips the allocation and the graph captures.
type kvCache struct {
	kv     devptr
	bytes  int64
	ctx    int
	reg    regions // the device's regions plus this KV cache
	decode graph
	// decodeDraw is the decode schedule and then the sampler (plans.Sampler)
	// in one graph: the decode steps whose token the sampler draws, with
	// no launch and no wait between the step and the draw.
	decodeDraw graph
	logits     []byte
	b          batch
}

// maxIdleCaches bounds how many caches stay parked (and hold VRAM).
const maxIdleCaches = 2

// takeCache returns a zeroed cache of at least ctx tokens: the smallest
// parked one that is large enough (requests of every length then reuse a few
// caches and their graphs), else a new one of ctx tokens; parked caches are
// freed first when the new one would not fit. d.mu is held.
func (d *Device) takeCache(ctx int) (*kvCache, error) {
	best := -1
	for i, c := range d.idle {
		if c.ctx >= ctx && (best < 0 || c.ctx < d.idle[best].ctx) {
			best = i
		}
	}
	if best >= 0 {
		c := d.idle[best]
		d.idle = slices.Delete(d.idle, best, best+1)
		if err := d.g.memset(c.kv, 0, c.bytes); err != nil {
			return nil, errors.Join(err, d.freeCache(c))
		}
		return c, nil
	}
	c := &kvCache{ctx: ctx, bytes: kvBytes(&d.plan.Manifest.Model, ctx)}
	what := fmt.Sprintf("a KV cache of %d tokens", ctx)
	if err := d.fits(c.bytes, what); err != nil {
		if !errors.Is(err, runtime.ErrOutOfMemory) || len(d.idle) == 0 {
			return nil, err
		}
		if ferr := d.freeIdle(); ferr != nil {
			return nil, ferr
		}
		if err := d.fits(c.bytes, what); err != nil {
			return nil, err
		}
	}
	var err error
	if c.kv, err = d.g.alloc(max(c.bytes, 1)); err != nil {
		return nil, d.outOfMemory(err, c.bytes, what)
	}
	d.kvBytes += c.bytes
	if c.logits, err = d.g.hostAlloc(4 * max(d.plan.Manifest.Model.Vocab, 1)); err != nil {
		return nil, errors.Join(err, d.freeCache(c))
	}
	if err := d.g.memset(c.kv, 0, c.bytes); err != nil {
		return nil, errors.Join(err, d.freeCache(c))
	}
	c.reg = d.reg
	c.reg.kv, c.reg.kvBytes, c.reg.ctx = uint64(c.kv), c.bytes, int64(ctx)
	return c, nil
}

// parkCache puts c on the idle list; when the list is full the smallest
// cache (c or a parked one) is freed, as larger ones serve more requests.
func (d *Device) parkCache(c *kvCache) error {
	d.idle = append(d.idle, c)
	if len(d.idle) <= maxIdleCaches {
		return nil
	}
	small := 0
	for i, x := range d.idle {
		if x.ctx < d.idle[small].ctx {
			small = i
		}
	}
	c = d.idle[small]
	d.idle = slices.Delete(d.idle, small, small+1)
	return d.freeCache(c)
}

func (d *Device) freeIdle() error {
	var err error
	for _, c := range d.idle {
		err = errors.Join(err, d.freeCache(c))
	}
	d.idle = nil
	return err
}

// freeCache releases c's graphs, pinned buffer and VRAM once the stream is idle.
func (d *Device) freeCache(c *kvCache) error {
	err := d.g.sync()
	for _, x := range []*graph{&c.decode, &c.decodeDraw} {
		if *x != 0 {
			err = errors.Join(err, d.g.graphDestroy(*x))
			*x = 0
		}
	}
	if c.logits != nil {
		err = errors.Join(err, d.g.hostFree(c.logits))
		c.logits = nil
	}
	if c.kv != 0 {
		err = errors.Join(err, d.g.free(c.kv))
		d.kvBytes -= c.bytes
		c.kv = 0
	}
	return err
}

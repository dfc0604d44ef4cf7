package cuda

import (
	"errors"
	"fmt"
	"slices"

	"github.com/llama-orch/orc/runtime"
)

// kvCache is what a sequence holds on the GPU: its KV cache
// [n_layer][2][ctx][n_head_kv*head_dim] fp16, the decode graph captured over
// it (0 until the first decode step), its pinned logits buffer f32 [vocab]
// and a reusable launch batch. A closed sequence parks its cache on the
// device's idle list, so the next sequence of the same context skips the
// allocation and the graph capture.
type kvCache struct {
	kv     devptr
	bytes  int64
	ctx    int
	reg    regions // the device's regions plus this KV cache
	decode graph
	logits []byte
	b      batch
}

// maxIdleCaches bounds how many caches stay parked (and hold VRAM).
const maxIdleCaches = 2

// takeCache returns a zeroed cache of ctx tokens: a parked one of that
// context, else a new one; parked caches are freed first when the new one
// would not fit. d.mu is held.
func (d *Device) takeCache(ctx int) (*kvCache, error) {
	for i, c := range d.idle {
		if c.ctx == ctx {
			d.idle = slices.Delete(d.idle, i, i+1)
			if err := d.g.memset(c.kv, 0, c.bytes); err != nil {
				return nil, errors.Join(err, d.freeCache(c))
			}
			return c, nil
		}
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

// parkCache puts c on the idle list, or frees it when the list is full.
func (d *Device) parkCache(c *kvCache) error {
	if len(d.idle) < maxIdleCaches {
		d.idle = append(d.idle, c)
		return nil
	}
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

// freeCache releases c's graph, pinned buffer and VRAM once the stream is idle.
func (d *Device) freeCache(c *kvCache) error {
	err := d.g.sync()
	if c.decode != 0 {
		err = errors.Join(err, d.g.graphDestroy(c.decode))
		c.decode = 0
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

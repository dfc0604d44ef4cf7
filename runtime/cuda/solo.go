package cuda

import (
	"errors"
	"fmt"

	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

var _ runtime.SoloBatch = (*Batch)(nil)

// newSolo makes a batch's solo sequence, a sequence of the device's
// context (its own cache, decode graph and the GPU sampler), before the
// pool takes the free memory; d.mu is held.
func (d *Device) newSolo() (*sequence, error) {
	c, err := d.takeCache(d.ctx)
	if err != nil {
		return nil, fmt.Errorf("the solo sequence: %w", err)
	}
	s := &sequence{d: d, c: c, limit: d.ctx}
	d.seqs[s] = struct{}{}
	return s, nil
}

// dropSolo frees the solo sequence's cache (a device that closed first
// freed it already); d.mu is held.
func (d *Device) dropSolo(s *sequence) error {
	if s == nil || s.closed {
		return nil
	}
	s.closed = true
	delete(d.seqs, s)
	if d.replayable == s {
		d.replayable = nil
	}
	return d.freeCache(s.c)
}

// Solo is the batch's single sequence (BatchConfig.Solo); nil without one.
func (b *Batch) Solo() runtime.Sequence {
	if b.solo == nil {
		return nil
	}
	return b.solo
}

// LoadSolo copies positions [from, to) from the blocks into the solo
// sequence's cache and sets its position to to: one 2D copy a block.
func (b *Batch) LoadSolo(blocks []int32, from, to int) error {
	b.d.mu.Lock()
	defer b.d.mu.Unlock()
	if err := b.soloSpan(blocks, from, to, "load"); err != nil {
		return err
	}
	if from > b.solo.pos {
		return fmt.Errorf("cuda: loading positions [%d, %d) into a solo sequence that holds %d: %w", from, to, b.solo.pos, runtime.ErrBatchRows)
	}
	if err := b.copySolo(blocks, from, to, true); err != nil {
		return err
	}
	b.solo.pos = to
	b.d.replayable = nil
	return nil
}

// StoreSolo copies positions [from, to) of the solo sequence's cache into
// the blocks: one 2D copy a block.
func (b *Batch) StoreSolo(blocks []int32, from, to int) error {
	b.d.mu.Lock()
	defer b.d.mu.Unlock()
	if err := b.soloSpan(blocks, from, to, "store"); err != nil {
		return err
	}
	if to > b.solo.pos {
		return fmt.Errorf("cuda: storing positions [%d, %d) of a solo sequence that holds %d: %w", from, to, b.solo.pos, runtime.ErrBatchRows)
	}
	return b.copySolo(blocks, from, to, false)
}

// soloSpan checks a copy of positions [from, to) between the solo
// sequence and blocks; d.mu is held.
func (b *Batch) soloSpan(blocks []int32, from, to int, what string) error {
	switch {
	case b.closed || b.d.closed:
		return errors.New("cuda: the batch is closed")
	case b.solo == nil:
		return errors.New("cuda: the batch has no solo sequence (BatchConfig.Solo)")
	case from < 0 || to < from || to > b.solo.limit || to > len(blocks)*b.lim.blockTokens:
		return fmt.Errorf("cuda: %s positions [%d, %d) with %d blocks of %d tokens and a solo cache of %d: %w",
			what, from, to, len(blocks), b.lim.blockTokens, b.solo.limit, runtime.ErrBatchRows)
	}
	bt := b.lim.blockTokens
	if from < to {
		for _, blk := range blocks[from/bt : (to+bt-1)/bt] {
			if blk < 0 || int(blk) >= b.lim.blocks {
				return fmt.Errorf("cuda: %s names block %d; the pool holds %d: %w", what, blk, b.lim.blocks, runtime.ErrBatchRows)
			}
		}
	}
	return nil
}

// copySolo enqueues the copies of positions [from, to) between the solo
// cache and the blocks (toSolo: into the cache); d.mu is held.
func (b *Batch) copySolo(blocks []int32, from, to int, toSolo bool) error {
	c := b.solo.c
	g := newKVGeometry(&b.d.plan.Manifest.Model, c.ctx, b.lim.blockTokens)
	return g.runs(blocks, from, to, func(r kvRun) error {
		cache := span2D{addr: uint64(c.kv) + uint64(r.cache), pitch: g.cachePitch}
		pool := span2D{addr: b.reg.pool + uint64(r.pool), pitch: g.poolPitch}
		if toSolo {
			return b.d.g.copy2D(cache, pool, r.bytes, g.slabs)
		}
		return b.d.g.copy2D(pool, cache, r.bytes, g.slabs)
	})
}

// kvGeometry is where a position's keys and values lie in a sequence's
// cache (plans.ArgKV: [n_layer][K, V][ctx] rows of Model.KVRowBytes) and
// in the pool (plans.ArgKVPool: [block][n_layer][K, V][BT] rows).
// Both hold a position's row in n_layer·2 slabs, one per layer and part,
// at a fixed pitch: positions of one block copy as one 2D copy of slabs
// rows.
type kvGeometry struct {
	row        int64 // one position's bytes in a slab
	slabs      int64 // n_layer·2
	cachePitch int64 // from one slab to the next in the cache: ctx rows
	poolPitch  int64 // in a pool block: BT rows
	bt         int
}

func newKVGeometry(m *plans.Model, ctx, bt int) kvGeometry {
	row := m.KVRowBytes()
	return kvGeometry{row: row, slabs: 2 * int64(m.NLayer), cachePitch: int64(ctx) * row, poolPitch: int64(bt) * row, bt: bt}
}

// kvRun is the positions of [from, to) in one pool block: where the first
// lies in the first slab of the cache and of the pool, and their bytes in
// a slab.
type kvRun struct{ cache, pool, bytes int64 }

// runs calls f with the run of each block that positions [from, to) of
// the sequence whose block table is blocks touch.
func (g kvGeometry) runs(blocks []int32, from, to int, f func(kvRun) error) error {
	for p := from; p < to; {
		i := p / g.bt
		end := min(to, (i+1)*g.bt)
		r := kvRun{
			cache: int64(p) * g.row,
			pool:  int64(blocks[i])*g.slabs*g.poolPitch + int64(p%g.bt)*g.row,
			bytes: int64(end-p) * g.row,
		}
		if err := f(r); err != nil {
			return err
		}
		p = end
	}
	return nil
}

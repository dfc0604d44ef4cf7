package cpu

import (
	"errors"
	"fmt"

	"github.com/llama-orch/orc/runtime"
)

var _ runtime.SoloBatch = (*Batch)(nil)

// newSolo is a batch's solo sequence: a cache of the device's context whose
// steps decode weight rows as the batched step does, so that its logits
// are the batched step's bit for bit.
func (d *Device) newSolo() (*Sequence, error) {
	ctx := d.info.ContextLength
	if err := checkHostMemory(kvBytes(d.prog.kv, ctx), fmt.Sprintf("the solo sequence's KV cache of %d tokens", ctx)); err != nil {
		return nil, err
	}
	return &Sequence{dev: d, kv: newKVCache(d.prog.kv, ctx), decodeRows: true}, nil
}

// Solo is the batch's single sequence (BatchConfig.Solo); nil without one.
func (b *Batch) Solo() runtime.Sequence {
	if b.solo == nil {
		return nil
	}
	return b.solo
}

// LoadSolo copies positions [from, to) from the blocks into the solo
// sequence's cache and sets its position to to.
func (b *Batch) LoadSolo(blocks []int32, from, to int) error {
	b.dev.mu.Lock()
	defer b.dev.mu.Unlock()
	pool, err := b.soloSpan(blocks, from, to, "load")
	if err != nil {
		return err
	}
	if from > b.solo.pos {
		return fmt.Errorf("cpu: loading positions [%d, %d) into a solo sequence that holds %d: %w", from, to, b.solo.pos, runtime.ErrBatchRows)
	}
	copyPositions(b.solo.kv, pool, from, to)
	b.solo.pos = to
	return nil
}

// StoreSolo copies positions [from, to) of the solo sequence's cache into
// the blocks.
func (b *Batch) StoreSolo(blocks []int32, from, to int) error {
	b.dev.mu.Lock()
	defer b.dev.mu.Unlock()
	pool, err := b.soloSpan(blocks, from, to, "store")
	if err != nil {
		return err
	}
	if to > b.solo.pos {
		return fmt.Errorf("cpu: storing positions [%d, %d) of a solo sequence that holds %d: %w", from, to, b.solo.pos, runtime.ErrBatchRows)
	}
	copyPositions(pool, b.solo.kv, from, to)
	return nil
}

// soloSpan checks a copy of positions [from, to) between the solo
// sequence and blocks, and returns the blocks' cache in the pool; d.mu is
// held.
func (b *Batch) soloSpan(blocks []int32, from, to int, what string) (*kvCache, error) {
	switch {
	case b.kv == nil:
		return nil, errors.New("cpu: the batch is closed")
	case b.solo == nil:
		return nil, errors.New("cpu: the batch has no solo sequence (BatchConfig.Solo)")
	case from < 0 || to < from || to > b.solo.kv.positions() || to > len(blocks)*b.cfg.BlockTokens:
		return nil, fmt.Errorf("cpu: %s positions [%d, %d) with %d blocks of %d tokens and a solo cache of %d: %w",
			what, from, to, len(blocks), b.cfg.BlockTokens, b.solo.kv.positions(), runtime.ErrBatchRows)
	}
	bt := b.cfg.BlockTokens
	if from < to {
		for _, blk := range blocks[from/bt : (to+bt-1)/bt] {
			if blk < 0 || int(blk) >= b.blocks {
				return nil, fmt.Errorf("cpu: %s names block %d; the pool holds %d: %w", what, blk, b.blocks, runtime.ErrBatchRows)
			}
		}
	}
	return &kvCache{store: b.kv, table: blocks}, nil
}

// copyPositions copies every layer's keys and values of positions
// [from, to) from src to dst.
func copyPositions(dst, src *kvCache, from, to int) {
	for l, sl := range src.store.layers {
		dl, w := dst.store.layers[l], sl.width
		for p := from; p < to; p++ {
			s, d := src.row(p)*w, dst.row(p)*w
			copy(dl.k[d:d+w], sl.k[s:s+w])
			copy(dl.v[d:d+w], sl.v[s:s+w])
		}
	}
}

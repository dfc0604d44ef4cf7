package cuda

import (
	"bytes"
	"testing"

	"github.com/llama-orch/orc/runtime"
)

// A batch with a solo sequence takes its cache before sizing the default
// pool and frees both on Close; StoreSolo and LoadSolo move exactly the
// bytes kvGeometry names (cuMemcpy2DAsync on the device, the geometry's
// copies on host images here), and nothing else.
func TestGPUSoloCopies(t *testing.T) {
	if !gpuTests() {
		t.Skip("set ORC_GPU_TESTS=1 on a GPU host")
	}
	c := toy{vocab: 100, dim: 8, maxTokens: 4, ctx: 16}
	p := c.write(t)
	withToyBatch(p, c.vocab)
	d, err := Open(p, 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	free0 := freeMem(t, d.g)
	const bt = 4
	perBlock := kvBytes(&p.Manifest.Model, bt)
	bb, err := d.NewBatch(runtime.BatchConfig{Sequences: 2, StepTokens: 4, BlockTokens: bt, KVBytes: 5 * perBlock, Solo: true})
	if err != nil {
		t.Fatal(err)
	}
	b := bb.(*Batch)
	if b.Solo() == nil || b.solo.c.ctx != c.ctx {
		t.Fatalf("solo sequence %v", b.solo)
	}
	m := &p.Manifest.Model
	g := newKVGeometry(m, b.solo.c.ctx, bt)
	// Distinct bytes in the solo cache and the pool.
	cache := make([]byte, b.solo.c.bytes)
	for i := range cache {
		cache[i] = byte(i*7 + 1)
	}
	pool := make([]byte, b.reg.poolBytes)
	for i := range pool {
		pool[i] = byte(i*13 + 5)
	}
	if err := d.g.copyHtoD(b.solo.c.kv, cache); err != nil {
		t.Fatal(err)
	}
	if err := d.g.copyHtoD(devptr(b.reg.pool), pool); err != nil {
		t.Fatal(err)
	}
	table := []int32{3, 1, 2, 0} // block 4 is the one the batch reserves
	apply := func(dst []byte, dstPool bool, src []byte, from, to int) {
		if err := g.runs(table, from, to, func(r kvRun) error {
			for s := range g.slabs {
				cOff, pOff := r.cache+s*g.cachePitch, r.pool+s*g.poolPitch
				if dstPool {
					copy(dst[pOff:pOff+r.bytes], src[cOff:cOff+r.bytes])
				} else {
					copy(dst[cOff:cOff+r.bytes], src[pOff:pOff+r.bytes])
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	b.solo.pos = 14 // as if it had run 14 positions
	if err := b.StoreSolo(table, 2, 14); err != nil {
		t.Fatal(err)
	}
	apply(pool, true, cache, 2, 14)
	gotPool := make([]byte, len(pool))
	if err := d.g.copyDtoH(gotPool, devptr(b.reg.pool)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotPool, pool) {
		t.Fatal("StoreSolo: the pool differs from the geometry's copies")
	}
	// Change the pool's rows of positions [5, 11), then load them back.
	for i := range pool {
		pool[i] ^= 0x5a
	}
	if err := d.g.copyHtoD(devptr(b.reg.pool), pool); err != nil {
		t.Fatal(err)
	}
	if err := b.LoadSolo(table, 5, 11); err != nil {
		t.Fatal(err)
	}
	apply(cache, false, pool, 5, 11)
	gotCache := make([]byte, len(cache))
	if err := d.g.copyDtoH(gotCache, b.solo.c.kv); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotCache, cache) {
		t.Fatal("LoadSolo: the solo cache differs from the geometry's copies")
	}
	if b.solo.pos != 11 {
		t.Errorf("after loading [5, 11) the solo sequence holds %d positions", b.solo.pos)
	}
	if err := bb.Close(); err != nil {
		t.Fatal(err)
	}
	if drop := free0 - freeMem(t, d.g); drop > 64<<20 {
		t.Fatalf("free memory dropped by %d bytes after Close", drop)
	}
	// A device closed with a batch open frees the solo sequence once.
	if _, err := d.NewBatch(runtime.BatchConfig{Sequences: 2, StepTokens: 4, BlockTokens: bt, KVBytes: 5 * perBlock, Solo: true}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

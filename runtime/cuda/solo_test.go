package cuda

import (
	"encoding/binary"
	"testing"

	"github.com/llama-orch/orc/plans"
)

// The solo hand-over's 2D copies, carried out on host images of a
// sequence's cache and of the pool, put every position's keys and values
// where plans.ArgKVPool's formula says (block table[p/BT], row p%BT), and
// copied back, where plans.ArgKV's says.
func TestSoloCopiesFollowTheKVLayouts(t *testing.T) {
	m := &plans.Model{NLayer: 3, NHeadKV: 2, HeadDim: 4}
	const ctx, bt, blocks = 40, 8, 7
	width := m.NHeadKV * m.HeadDim // fp16 elements of a row
	table := []int32{5, 2, 6, 0, 3}
	cacheAt := func(l, part, p, e int) int { return 2 * (((l*2+part)*ctx+p)*width + e) }
	poolAt := func(blk, l, part, row, e int) int {
		return 2 * ((((blk*m.NLayer+l)*2+part)*bt+row)*width + e)
	}
	value := func(l, part, p, e int) uint16 { return uint16(1 + (l<<12 | part<<11 | p<<4 | e)) }
	le := binary.LittleEndian
	cache := make([]byte, 2*m.NLayer*ctx*width*2)
	for l := range m.NLayer {
		for part := range 2 {
			for p := range ctx {
				for e := range width {
					le.PutUint16(cache[cacheAt(l, part, p, e):], value(l, part, p, e))
				}
			}
		}
	}
	pool := make([]byte, blocks*2*m.NLayer*bt*width*2)
	g := newKVGeometry(m, ctx, bt)
	// copy2D as the driver does it, on the host images.
	copy2D := func(dst []byte, dOff, dPitch int64, src []byte, sOff, sPitch, bytes, height int64) {
		for r := range height {
			copy(dst[dOff+r*dPitch:dOff+r*dPitch+bytes], src[sOff+r*sPitch:sOff+r*sPitch+bytes])
		}
	}
	const from, to = 5, 35
	runs := 0
	if err := g.runs(table, from, to, func(r kvRun) error {
		runs++
		copy2D(pool, r.pool, g.poolPitch, cache, r.cache, g.cachePitch, r.bytes, g.slabs)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if runs != 5 {
		t.Errorf("%d copies for positions [%d, %d) in blocks of %d, want 5 (one a block)", runs, from, to, bt)
	}
	for l := range m.NLayer {
		for part := range 2 {
			for p := range ctx {
				for e := range width {
					got := le.Uint16(pool[poolAt(int(table[p/bt]), l, part, p%bt, e):])
					want := value(l, part, p, e)
					if p < from || p >= to {
						want = 0
					}
					if got != want {
						t.Fatalf("pool: layer %d part %d position %d element %d holds %#x, want %#x", l, part, p, e, got, want)
					}
				}
			}
		}
	}
	back := make([]byte, len(cache))
	if err := g.runs(table, from, to, func(r kvRun) error {
		copy2D(back, r.cache, g.cachePitch, pool, r.pool, g.poolPitch, r.bytes, g.slabs)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for l := range m.NLayer {
		for part := range 2 {
			for p := from; p < to; p++ {
				at := cacheAt(l, part, p, 0)
				if got, want := back[at:at+2*width], cache[at:at+2*width]; string(got) != string(want) {
					t.Fatalf("back in the cache: layer %d part %d position %d differs", l, part, p)
				}
			}
		}
	}
}

package cpu

import (
	"fmt"
	"math"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
)

// kvStore is keys and values, float32, per layer in blocks of blockTokens
// positions: [blocks·blockTokens][kv_heads·head_dim]. A single sequence's
// cache is one block of its whole context; a batch's pool is many small
// blocks that sequences take through their block tables.
type kvStore struct {
	blockTokens int
	layers      []kvLayer
}

type kvLayer struct {
	width int // kv_heads·head_dim; 0 where the layer has no attention
	k, v  []float32
}

func newKVStore(shapes []kvShape, blocks, blockTokens int) *kvStore {
	c := &kvStore{blockTokens: blockTokens, layers: make([]kvLayer, len(shapes))}
	for i, s := range shapes {
		if s.width > 0 {
			n := blocks * blockTokens * s.width
			c.layers[i] = kvLayer{width: s.width, k: make([]float32, n), v: make([]float32, n)}
		}
	}
	return c
}

// kvCache is one sequence's positions in a store: position p lies at row
// table[p/blockTokens]·blockTokens + p%blockTokens.
type kvCache struct {
	store *kvStore
	table []int32
}

// newKVCache is a single sequence's cache of ctx positions.
func newKVCache(shapes []kvShape, ctx int) *kvCache {
	return &kvCache{store: newKVStore(shapes, 1, ctx), table: []int32{0}}
}

// positions is how many positions the sequence's blocks hold.
func (c *kvCache) positions() int { return len(c.table) * c.store.blockTokens }

// row is the store row of position p.
func (c *kvCache) row(p int) int {
	bt := c.store.blockTokens
	return int(c.table[p/bt])*bt + p%bt
}

// kvBytes is the cache size of a sequence of ctx tokens.
func kvBytes(shapes []kvShape, ctx int) int64 {
	total := int64(0)
	for _, s := range shapes {
		total += 2 * 4 * int64(ctx) * int64(s.width)
	}
	return total
}

// attention stores this step's k, v rows at their positions in the layer's
// cache, then computes causal softmax(q·kᵀ·scale)·v per head over the cache
// up to each query's position (the last window positions when window > 0).
// Sinks add exp(sink − max) to the denominator. Heads share KV heads in
// groups of heads/kv_heads (GQA).
func (pr *program) attention(n *ir.Node) (func(*stepState) error, error) {
	layer := int(n.Int("layer"))
	heads, kvHeads, hd := int(n.Int("heads")), int(n.Int("kv_heads")), int(n.Int("head_dim"))
	width := kvHeads * hd
	for len(pr.kv) <= layer {
		pr.kv = append(pr.kv, kvShape{})
	}
	if pr.kv[layer].width != 0 {
		return nil, fmt.Errorf("a second attention node for layer %d", layer)
	}
	pr.kv[layer] = kvShape{width: width}
	var sinks []float32
	if len(n.Inputs) == 4 {
		var err error
		if sinks, err = pr.dense(n.Inputs[3]); err != nil {
			return nil, err
		}
	}
	q, k, v, out := pr.bufs[n.Inputs[0]], pr.bufs[n.Inputs[1]], pr.bufs[n.Inputs[2]], pr.bufs[n]
	scale, window, group := n.Float("scale"), int(n.Int("window")), heads/kvHeads
	store := func(dst, src []float32) { copy(dst, src) }
	if ir.KVQ8(n) {
		store = func(dst, src []float32) { plans.KVQ8Round(dst, src, hd) }
	}
	return func(st *stepState) error {
		last := int32(0)
		for t, p := range st.positions[:st.t] {
			c := st.cacheOf(t)
			if int(p) >= c.positions() || p < 0 {
				return fmt.Errorf("position %d is outside the cache of %d", p, c.positions())
			}
			cache, r := c.store.layers[layer], c.row(int(p))*width
			store(cache.k[r:r+width], k[t*width:(t+1)*width])
			store(cache.v[r:r+width], v[t*width:(t+1)*width])
			last = max(last, p)
		}
		parallelFor(pr.threads, st.t*heads, int(last+1)*hd*2, func(lo, hi int) {
			scores := make([]float64, 0, last+1)
			acc := make([]float64, hd)
			for job := lo; job < hi; job++ {
				t, h := job/heads, job%heads
				c := st.cacheOf(t)
				cache := c.store.layers[layer]
				p := int(st.positions[t])
				first := 0
				if window > 0 {
					first = max(0, p-window+1)
				}
				qh := q[t*heads*hd+h*hd : t*heads*hd+(h+1)*hd]
				off := (h / group) * hd
				scores = scores[:0]
				top := math.Inf(-1)
				if sinks != nil {
					top = float64(sinks[h])
				}
				for j := first; j <= p; j++ {
					r := c.row(j) * width
					kj := cache.k[r+off : r+off+hd]
					s := 0.0
					for d := range hd {
						s += float64(qh[d]) * float64(kj[d])
					}
					s *= scale
					scores = append(scores, s)
					top = max(top, s)
				}
				denom := 0.0
				if sinks != nil {
					denom = math.Exp(float64(sinks[h]) - top)
				}
				clear(acc)
				for i, s := range scores {
					e := math.Exp(s - top)
					denom += e
					vj := cache.v[c.row(first+i)*width+off:]
					for d := range hd {
						acc[d] += e * float64(vj[d])
					}
				}
				o := out[t*heads*hd+h*hd:]
				for d := range hd {
					o[d] = float32(acc[d] / denom)
				}
			}
		})
		return nil
	}, nil
}

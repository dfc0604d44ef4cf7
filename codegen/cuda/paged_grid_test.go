package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// TestPagedGridCoversTheSteps holds attend_paged's grid (tiles, kv heads,
// splits) to the work of every step it may launch for: x the step's tiles
// (a row of n tokens is ceil(n/TQ) of them, TQ = 16/G) for steps of prompt
// chunks and decode tokens in up to 64 rows of up to 512 tokens, and for
// steps of decode tokens alone in the decode schedule's grid; z the node's
// splits. A grid short of them would drop tiles' attention silently.
func TestPagedGridCoversTheSteps(t *testing.T) {
	const maxTokens, maxRows = 512, 64
	sm90, _ := passes.GPUTarget("sm_90")
	widths := []struct {
		name           string
		group, kvh, hd int64
	}{
		{"Phi-3-mini", 1, 32, 96}, {"Qwen2.5-0.5B", 7, 2, 64}, {"gpt-oss", 8, 8, 64}, {"Llama-3.2-1B", 4, 8, 64}, {"a group of 16", 16, 1, 32},
	}
	r := rand.New(rand.NewPCG(3, 5))
	for _, w := range widths {
		p := sm90.PagedAttention(w.hd, w.kvh)
		shape := pagedShape{stages: p.Stages, splits: p.Splits, hd: w.hd}
		tq := 16 / w.group
		x := func(g grid, T int64) int64 {
			if g.div[0] == 0 {
				return g.a[0]*T + g.b[0]
			}
			return ceilDiv(g.a[0]*T+g.b[0], g.div[0])
		}
		mixed, err := pagedGrid(shape, w.group, w.kvh, maxRows, false)
		if err != nil {
			t.Fatal(err)
		}
		decode, err := pagedGrid(shape, w.group, w.kvh, maxRows, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []grid{mixed, decode} {
			if g.b[1] != w.kvh || g.a[1] != 0 || g.b[2] != shape.splits || g.a[2] != 0 {
				t.Errorf("%s: grid y, z are %d·T + %d, %d·T + %d, want the %d kv heads and %d splits", w.name, g.a[1], g.b[1], g.a[2], g.b[2], w.kvh, shape.splits)
			}
		}
		for T := int64(1); T <= maxRows; T++ { // decode tokens alone: a tile each
			for _, g := range []grid{mixed, decode} {
				if x(g, T) < T {
					t.Errorf("%s: %d decode rows are %d tiles, the grid gives %d", w.name, T, T, x(g, T))
				}
			}
		}
		for range 2000 { // rows of random lengths, up to maxTokens in all
			rows := 1 + r.Int64N(maxRows)
			var T, tiles int64
			for range rows {
				n := int64(1)
				if r.IntN(3) == 0 {
					n = 1 + r.Int64N(300)
				}
				if T+n > maxTokens {
					break
				}
				T, tiles = T+n, tiles+ceilDiv(n, tq)
			}
			if T == 0 {
				continue
			}
			if x(mixed, T) < tiles {
				t.Errorf("%s: a step of %d tokens is %d tiles, the grid gives %d", w.name, T, tiles, x(mixed, T))
			}
		}
	}
	if _, err := pagedGrid(pagedShape{stages: 2, splits: 16, hd: 8}, 17, 1, maxRows, false); err == nil {
		t.Error("a group of 17 query heads: want refused (a tile holds 16 rows)")
	}
}

// TestSplitRuleIsTheKernels: the runtime sizes attend_paged's grid z by
// plans.PagedSplits, the kernels count a query's splits by ir.PagedSplits
// (paged_nz): one function, written on each side of the boundary.
func TestSplitRuleIsTheKernels(t *testing.T) {
	for _, most := range []int64{1, 2, 4, 8, 16} {
		for _, tiles := range []int64{1, 2, 4, 8, 16, 32} {
			for n := int64(0); n < 2048; n++ {
				if a, b := plans.PagedSplits(n, most, tiles), ir.PagedSplits(n, most, tiles); a != b {
					t.Fatalf("%d key tiles, most %d, tiles %d: plans %d, ir %d", n, most, tiles, a, b)
				}
			}
		}
	}
}

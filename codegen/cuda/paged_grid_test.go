package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/llama-orch/orc/passes"
)

// TestPagedGridCoversTheSteps holds attend_paged's grid to the work of
// every step it may launch for: the step's tiles (a row of n tokens is
// ceil(n/TQ) of them, TQ = 16/G) times the node's splits for steps of
// prompt chunks and decode tokens in up to 64 rows of up to 512 tokens,
// and for steps of decode tokens alone in the decode schedule's grid. A
// grid short of them would drop tiles' attention silently.
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
		if mixed.b[1] != w.kvh || decode.b[1] != w.kvh || mixed.a[1] != 0 {
			t.Errorf("%s: grid y is %d·T + %d, want the %d kv heads", w.name, mixed.a[1], mixed.b[1], w.kvh)
		}
		for T := int64(1); T <= maxRows; T++ { // decode tokens alone: a tile each
			for _, g := range []grid{mixed, decode} {
				if need := T * shape.splits; x(g, T) < need {
					t.Errorf("%s: %d decode rows need %d blocks a kv head, the grid gives %d", w.name, T, need, x(g, T))
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
			if need := tiles * shape.splits; x(mixed, T) < need {
				t.Errorf("%s: a step of %d tokens in %d tiles needs %d blocks a kv head, the grid gives %d", w.name, T, tiles, need, x(mixed, T))
			}
		}
	}
	if _, err := pagedGrid(pagedShape{stages: 2, splits: 16, hd: 8}, 17, 1, maxRows, false); err == nil {
		t.Error("a group of 17 query heads: want refused (a tile holds 16 rows)")
	}
}

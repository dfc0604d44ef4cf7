package cuda

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/llama-orch/orc/ir"
)

// The order of attend_paged's sums (paged.cu.tmpl), mirrored here on the
// CPU: which 16-key quarters of which key tiles each split's warps add
// up for a query token, in the order they add them. The kernel's sums
// run in that order, the warps' merged in warp order and the splits' in
// ascending split, so equal orders give equal outputs bit for bit.
const (
	pagedKeyTile = 64 // PAGED_KT
	pagedWarps   = 4  // PAGED_WARPS
	pagedQuarter = pagedKeyTile / pagedWarps
)

// pagedKeysOf mirrors paged_keys: a tile whose tokens run from position
// first to last takes key tiles [j0, j0 + span), and split z at stride
// splits those from firstTile, splits apart, tiles of them, keys below
// end.
func pagedKeysOf(first, last, window, splits, z int) (j0, span, end, firstTile, tiles int) {
	lo := 0
	if window > 0 {
		lo = max(0, first-window+1)
	}
	end = last + 1
	j0 = lo / pagedKeyTile
	span = (end+pagedKeyTile-1)/pagedKeyTile - j0
	firstTile = j0 + ((z-j0%splits)+splits)%splits
	if firstTile < j0+span {
		tiles = (j0 + span - firstTile + splits - 1) / splits
	}
	return
}

// pagedSums is the order of a query token's sums: per split, per warp,
// the first keys of the quarters it adds that hold a key the token sees.
// A quarter without one adds nothing (its keys masked), so it is left out.
type pagedSums [][pagedWarps][]int

// pagedTileSums mirrors attend_paged's key loop for a tile of tokens at
// positions (consecutive), at most splits splits of at least tiles key
// tiles each (paged_nz), and returns each token's sums.
func pagedTileSums(positions []int, window, splits, tiles int) []pagedSums {
	lo := func(p int) int {
		if window > 0 {
			return max(0, p-window+1)
		}
		return 0
	}
	nzOf := func(p int) int {
		return int(ir.PagedSplits(int64(p/pagedKeyTile-lo(p)/pagedKeyTile+1), int64(splits), int64(tiles)))
	}
	sums := make([]pagedSums, len(positions))
	nmin, nmax := splits, 1
	for i, p := range positions {
		sums[i] = make(pagedSums, nzOf(p))
		nmin, nmax = min(nmin, len(sums[i])), max(nmax, len(sums[i]))
	}
	first, last := positions[0], positions[len(positions)-1]
	wfirst, wlast := lo(first), last // the tile's rows' key span
	for z := range nmax {
		st := nmax
		if z < nmin {
			st = nmin
		}
		_, _, end, firstTile, n := pagedKeysOf(first, last, window, st, z)
		for i := range n {
			j := firstTile + i*st
			for w := range pagedWarps {
				kw := j*pagedKeyTile + pagedQuarter*w
				if kw >= end || kw > wlast || kw+pagedQuarter <= wfirst {
					continue // the kernel skips it
				}
				for r, p := range positions {
					if nz := len(sums[r]); z < nz && j%nz == z && kw <= p && kw+pagedQuarter > lo(p) {
						sums[r][z][w] = append(sums[r][z][w], kw)
					}
				}
			}
		}
	}
	return sums
}

// pagedStepSums runs a sequence of n tokens through steps of the given
// chunks (their token counts, in order) as the batched step cuts them into
// tiles of tq from each chunk's first token (paged_tile), and returns
// each position's sums.
func pagedStepSums(chunks []int, tq, window, splits, tiles int) []pagedSums {
	var sums []pagedSums
	pos := 0
	for _, c := range chunks {
		for t0 := pos; t0 < pos+c; t0 += tq {
			var positions []int
			for p := t0; p < min(t0+tq, pos+c); p++ {
				positions = append(positions, p)
			}
			sums = append(sums, pagedTileSums(positions, window, splits, tiles)...)
		}
		pos += c
	}
	return sums
}

// TestPagedSumsIgnoreChunking: a query token's sums in attend_paged run
// in the same order whether its sequence came in one chunk [0, n), in a
// cached prefix [0, p) and the rest [p, n) (a prefix-reused request
// against its cold run), in chunks of 1 to 4 tokens or a token a step
// (decode), for group sizes of 1 to 16 query heads (tiles of 16 to 1
// tokens), windows and split counts; and each sees every key of its own
// once. So prefix reuse gives a cold run's outputs bit for bit.
func TestPagedSumsIgnoreChunking(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 7))
	for _, tq := range []int{16, 4, 2, 1} {
		for _, window := range []int{0, 8, 100} {
			for _, g := range [][2]int{{1, 1}, {4, 1}, {16, 1}, {16, 2}, {16, 8}, {8, 3}} {
				splits, tiles := g[0], g[1]
				for range 6 {
					n := 1 + r.IntN(700)
					p := r.IntN(n)
					var small []int
					for left := n; left > 0; {
						c := min(left, 1+r.IntN(4))
						small, left = append(small, c), left-c
					}
					ones := slices.Repeat([]int{1}, n)
					name := fmt.Sprintf("tiles of %d, window %d, %d splits of %d key tiles, %d tokens", tq, window, splits, tiles, n)
					want := pagedStepSums([]int{n}, tq, window, splits, tiles)
					checkEverySeen(t, name, want, window)
					for _, chunks := range [][]int{{p, n - p}, small, ones} {
						got := pagedStepSums(slices.DeleteFunc(chunks, func(c int) bool { return c == 0 }), tq, window, splits, tiles)
						for pos := range n {
							if !slices.EqualFunc(got[pos], want[pos], func(a, b [pagedWarps][]int) bool {
								return slices.EqualFunc(a[:], b[:], slices.Equal[[]int])
							}) {
								t.Fatalf("%s, chunks %v: position %d sums %v, in one chunk %v", name, chunks, pos, got[pos], want[pos])
							}
						}
					}
				}
			}
		}
	}
}

// checkEverySeen checks that position pos's sums cover its keys [lo,
// pos] once each.
func checkEverySeen(t *testing.T, name string, sums []pagedSums, window int) {
	t.Helper()
	for pos, s := range sums {
		lo := 0
		if window > 0 {
			lo = max(0, pos-window+1)
		}
		seen := map[int]int{}
		for _, split := range s {
			for _, quarters := range split {
				for _, kw := range quarters {
					for k := max(kw, lo); k < min(kw+pagedQuarter, pos+1); k++ {
						seen[k]++
					}
				}
			}
		}
		for k := lo; k <= pos; k++ {
			if seen[k] != 1 {
				t.Fatalf("%s: position %d adds key %d %d times", name, pos, k, seen[k])
			}
		}
		if len(seen) != pos+1-lo {
			t.Fatalf("%s: position %d adds %d keys, sees %d", name, pos, len(seen), pos+1-lo)
		}
	}
}

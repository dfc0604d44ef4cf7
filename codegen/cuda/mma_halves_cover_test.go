package cuda_test

import (
	"fmt"
	"testing"

	"github.com/llama-orch/orc/passes"
)

// The index arithmetic of mma_halves.cu.tmpl, transcribed: where
// mmah_stage puts each token's activations and slice sums, which staged
// places each lane's B fragments read (mmah_lanes, MmaH's dot), which
// super-blocks each warp fetches and multiplies (mmah_run's walk), and
// which blocks finish which tiles from whose partial sums. TestMMAHalvesCover
// runs it for the shapes MMAHalvesShape and MMAHalvesCluster give, so that
// a product that takes an element or a token twice, or none, is found
// without a GPU.

// mmahSwizzle is mmah_swizzle for rows of tp tokens of xh halves.
func mmahSwizzle(tp, xh, r int) int {
	sh := 2
	if xh == 2 {
		sh = 1
	}
	return (((r ^ (r >> 4)) & 3) << sh) & (tp - 1)
}

// mmahLanes is mmah_lanes: lane (g, t)'s four B offsets an n-tile.
func mmahLanes(tp, xh, lr, g int) []int {
	own := (lr ^ (lr >> 4)) & 3
	at := make([]int, 4*tp/8)
	for j := range tp / 8 {
		for q := range 4 {
			at[4*j+q] = lr*tp + ((8*j + g) ^ mmahSwizzle(tp, xh, q^own))
		}
	}
	return at
}

// mmahSlot is what a staged place holds: the token (-1: a zero past the
// step's rows) and the element group (element / 4, of the whole row) or,
// for a slice sum, the slice (element / 32) and whether it is the high
// half.
type mmahSlot struct {
	set       bool
	tok, what int
	hi        bool
}

// mmahShapeCase is one launch of an mma_halves kernel: its template
// arguments, its grid and the step's rows.
type mmahShapeCase struct {
	in, c, nw, nt, xh, ncl, tiles, rows int
	q6                                  bool // Q6_K's k-steps, else Q4_K's and Q5_K's
}

func (k mmahShapeCase) String() string {
	typ := "Q4_K/Q5_K"
	if k.q6 {
		typ = "Q6_K"
	}
	return fmt.Sprintf("%s in %d, clusters of %d, %d warps, %d n-tiles, x in %d halves, %d clusters, %d tiles, %d rows", typ, k.in, k.c, k.nw, k.nt, k.xh, k.ncl, k.tiles, k.rows)
}

// mmahStage is mmah_stage for the block of rank rank at tokens tok0..: its
// xh and xs places (xs in halves).
func mmahStage(t *testing.T, k mmahShapeCase, rank, tok0 int) (xh, xs []mmahSlot) {
	sr, tp := k.in/256/k.c, 8*k.nt
	kr, all := sr*64, sr*64*8*k.nt
	if all%32 != 0 {
		t.Fatalf("%v: %d float4 to stage, not whole warps", k, all)
	}
	k0 := rank * sr * 256
	xh, xs = make([]mmahSlot, sr*64*tp), make([]mmahSlot, sr*4*tp*4)
	for p := range all {
		kk, r := p/kr, p%kr
		tok := tok0 + kk
		if tok >= k.rows {
			tok = -1
		}
		i := r*tp + (kk ^ mmahSwizzle(tp, k.xh, r))
		if xh[i].set {
			t.Fatalf("%v: rank %d stages place %d twice", k, rank, i)
		}
		xh[i] = mmahSlot{true, tok, k0/4 + r, false}
		if r&7 == 0 {
			// The eight threads p .. p+7 sum the slice: the same token and
			// slice, in one warp.
			if (p+7)/kr != kk || (p+7)%kr/8 != r/8 || p/32 != (p+7)/32 {
				t.Fatalf("%v: the threads of slice %d, token %d, are not eight of a warp", k, r/8, kk)
			}
			slice := r / 8
			d := ((slice/2)*tp+kk)*4 + slice&1
			for _, h := range []int{d, d + 2} {
				if xs[h].set {
					t.Fatalf("%v: rank %d stages slice half %d twice", k, rank, h)
				}
				xs[h] = mmahSlot{true, tok, k0/32 + slice, h == d}
			}
		}
	}
	for i := range xh {
		if !xh[i].set {
			t.Fatalf("%v: rank %d leaves staged place %d unset", k, rank, i)
		}
	}
	for i := range xs {
		if !xs[i].set {
			t.Fatalf("%v: rank %d leaves slice half %d unset", k, rank, i)
		}
	}
	return xh, xs
}

// mmahCover runs case k's launch: every block's staging, its warps' walks
// and every lane's fragments, and the blocks' finishing of tiles; it
// checks that each output (tile row, token) of the step is finished once,
// from the partial sums of the tile's own rows, and that those hold
// every element group of the row once (and, for Q4_K and Q5_K, every
// slice's sum once), each times the activations of the output's token.
func mmahCover(t *testing.T, k mmahShapeCase) {
	sr, tp := k.in/256/k.c, 8*k.nt
	groups := k.in / 4
	// cover[tile][row][tok][group]: products of the partial sums a tile's
	// row (of 16) holds for token tok; mins likewise by slice; finished:
	// the times each output was finished.
	at := func(tile, row, tok int) int { return (tile*16+row)*k.rows + tok }
	cover := make([]uint8, k.tiles*16*k.rows*groups)
	mins := make([]uint8, k.tiles*16*k.rows*k.in/32)
	finished := make([]int, k.tiles*16*k.rows)
	type partKey struct{ cl, rank, round, w int }
	for tok0 := 0; tok0 < k.rows; tok0 += tp {
		nt := min(k.nt, (k.rows-tok0+7)/8)
		na := k.nt
		if nt != k.nt {
			na = 1
		}
		stages := make([][2][]mmahSlot, k.c)
		for rank := range k.c {
			xh, xs := mmahStage(t, k, rank, tok0)
			stages[rank] = [2][]mmahSlot{xh, xs}
		}
		g := k.ncl
		rounds := (k.tiles + g*k.nw - 1) / (g * k.nw)
		items := rounds * sr
		// part[cluster, rank, round, warp]: the tile whose sums the round's
		// buffer holds (the kernel's two buffers alternate by round: a
		// round's are read before its ranks arrive at the next barrier).
		part := map[partKey]int{}
		for cl := range g {
			for rank := range k.c {
				xh, xs := stages[rank][0], stages[rank][1]
				for w := range k.nw {
					tileOf := func(i int) int { return (i/sr*k.nw+w)*g + cl }
					// The walk: item i (round i / sr, super-block i % sr of
					// the range) in buffer i % 2, item i + 1 fetched before
					// item i multiplies.
					var buf [2]int
					fetch := func(i, b int) {
						if tileOf(i) < k.tiles {
							buf[b] = i
						}
					}
					step := func(i, b int) {
						tile := tileOf(i)
						if tile >= k.tiles {
							return
						}
						if buf[b] != i {
							t.Fatalf("%v: rank %d warp %d multiplies item %d from a fetch of item %d", k, rank, w, i, buf[b])
						}
						mmahDot(t, k, xh, xs, tile, tok0, na, rank*sr+i%sr, i%sr, func(row, tok, grp int) {
							cover[at(tile, row, tok)*groups+grp]++
						}, func(row, tok, slice int) {
							mins[at(tile, row, tok)*k.in/32+slice]++
						})
						if i%sr == sr-1 {
							part[partKey{cl, rank, i / sr, w}] = tile
						}
					}
					buf = [2]int{-1, -1}
					fetch(0, 0)
					for i := 0; i < items; i += 2 {
						if i+1 < items {
							fetch(i+1, 1)
						}
						step(i, 0)
						if i+1 < items {
							if i+2 < items {
								fetch(i+2, 0)
							}
							step(i+1, 1)
						}
					}
				}
			}
		}
		for round := range rounds {
			// After the round's barrier: rank ρ finishes the tiles of warps
			// w ≡ ρ (mod C), summing every rank's buffer of warp w.
			for cl := range g {
				for rank := range k.c {
					for w := rank; w < k.nw; w += k.c {
						tw := (round*k.nw+w)*g + cl
						if tw >= k.tiles {
							break
						}
						for q := range k.c {
							if got, ok := part[partKey{cl, q, round, w}]; !ok || got != tw {
								t.Fatalf("%v: rank %d finishes tile %d from rank %d's sums of tile %d (%v)", k, rank, tw, q, got, ok)
							}
						}
						for row := range 16 {
							for tt := range tp {
								if tok0+tt < k.rows {
									finished[at(tw, row, tok0+tt)]++
								}
							}
						}
					}
				}
			}
		}
	}
	for tile := range k.tiles {
		for row := range 16 {
			for tok := range k.rows {
				o := at(tile, row, tok)
				if finished[o] != 1 {
					t.Fatalf("%v: tile %d row %d token %d finished %d times", k, tile, row, tok, finished[o])
				}
				for grp, n := range cover[o*groups : (o+1)*groups] {
					if n != 1 {
						t.Fatalf("%v: tile %d row %d token %d takes element group %d %d times", k, tile, row, tok, grp, n)
					}
				}
				if k.q6 {
					continue
				}
				for sl, n := range mins[o*k.in/32 : (o+1)*k.in/32] {
					if n != 2 { // the high and the low half
						t.Fatalf("%v: tile %d row %d token %d takes slice %d's sum %d times (halves)", k, tile, row, tok, sl, n)
					}
				}
			}
		}
	}
}

// mmahDot is MmaH's dot of one super-block sb (sbl in the block's range)
// for every lane of the warp on tile tile: for each k-step, the products
// the mma forms (row r of the tile times token column n of n-tile j take
// lane (r mod 8, t)'s A and lane (n, t)'s B at the same k places), checked
// to pair an element group with the staged activations of the same group,
// and handed to take(row, token, group) where the token is a real one;
// Q4_K's and Q5_K's mins (m16n8k8) likewise to slice(row, token, slice).
func mmahDot(t *testing.T, k mmahShapeCase, xh, xs []mmahSlot, tile, tok0, na, sb, sbl int, take, slice func(row, tok, grp int)) {
	tp := 8 * k.nt
	type step struct{ a, r int } // A's element group (of the super-block, lane t's less) and r (the B index's group, less the lane's)
	var steps []step
	lr := func(t int) int { return 16 * t }
	if k.q6 {
		lr = func(t int) int { return t }
		for n := range 2 {
			for kk := range 2 {
				for v := range 4 {
					r := sbl*64 + 32*n + 8*v + 4*kk
					steps = append(steps, step{32*n + 8*v + 4*kk, r})
				}
			}
		}
	} else {
		for kk := range 16 {
			steps = append(steps, step{kk, sbl*64 + kk})
		}
	}
	for _, st := range steps {
		for j := range na {
			for n := range 8 {
				for lt := range 4 {
					aGroup := sb*64 + st.a + lr(lt) // lane (row mod 8, lt)'s A, of every row of the tile
					at := mmahLanes(tp, k.xh, lr(lt), n)
					q := st.r & 3
					if k.q6 {
						q = (st.r ^ (st.r >> 4)) & 3
					}
					b := xh[at[4*j+q]+st.r*tp] // lane (n, lt)'s B
					if b.what != aGroup {
						t.Fatalf("%v: tile %d super-block %d: the elements of group %d meet the activations of group %d (lane %d, token column %d)", k, tile, sb, aGroup, b.what, lt, n)
					}
					want := tok0 + 8*j + n
					if want >= k.rows {
						want = -1
					}
					if b.tok != want {
						t.Fatalf("%v: tile %d super-block %d group %d: token column %d of n-tile %d reads token %d's activations", k, tile, sb, aGroup, n, j, b.tok)
					}
					for row := range 16 {
						if b.tok >= 0 {
							take(row, b.tok, aGroup)
						}
					}
				}
			}
		}
	}
	if k.q6 {
		return
	}
	// The mins: lane (g, t)'s A holds sub-blocks 2t, 2t+1 of rows g, g+8;
	// its B the uint2 (sbl·4 + t)·TP + 8j + g: halves hi even, hi odd, lo
	// even, lo odd.
	for j := range na {
		for n := range 8 {
			for lt := range 4 {
				u := (sbl*4+lt)*tp + 8*j + n
				for e := range 2 {
					for _, h := range []int{4*u + e, 4*u + 2 + e} {
						b := xs[h]
						if want := sb*8 + 2*lt + e; b.what != want || b.hi != (h == 4*u+e) {
							t.Fatalf("%v: tile %d super-block %d: the min of slice %d meets slice %d's sum (high %v)", k, tile, sb, want, b.what, b.hi)
						}
						want := tok0 + 8*j + n
						if want >= k.rows {
							want = -1
						}
						if b.tok != want {
							t.Fatalf("%v: tile %d super-block %d: the slice sums of token column %d read token %d's", k, tile, sb, n, b.tok)
						}
						for row := range 16 {
							if b.tok >= 0 {
								slice(row, b.tok, b.what)
							}
						}
					}
				}
			}
		}
	}
}

// TestMMAHalvesCover runs the transcribed index arithmetic for the shapes
// the passes give (MMAHalvesShape, and MMAHalvesCluster for every
// cluster size the harness takes) over widths of one to twelve
// super-blocks, tiles of the harness's and Phi-3-mini's products, steps
// of every row count of a block's n-tiles; and for the shape they refuse.
func TestMMAHalvesCover(t *testing.T) {
	gpu, err := passes.GPUTarget("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[mmahShapeCase]bool{}
	for _, in := range []int64{256, 512, 768, 1024, 3072} {
		for _, tiles := range []int64{1, 13, 40} {
			for _, maxTokens := range []int64{8, 16} {
				shapes := map[int64]passes.MMAHalves{}
				if sh, ok := gpu.MMAHalvesShape(in, tiles, maxTokens); ok {
					shapes[0] = sh
				}
				for c := int64(1); c <= 8; c++ {
					if sh, ok := gpu.MMAHalvesCluster(in, tiles, maxTokens, c); ok {
						shapes[c] = sh
					}
				}
				nt := passes.MMATokensNTiles(maxTokens)
				for _, sh := range shapes {
					for _, rows := range []int64{1, 7, 8, 9, maxTokens, 2*maxTokens + 3} {
						for _, q6 := range []bool{false, true} {
							for xh := 1; xh <= 2; xh++ {
								k := mmahShapeCase{in: int(in), c: int(sh.Cluster), nw: int(sh.Warps), nt: int(nt), xh: xh, ncl: int(sh.Clusters), tiles: int(tiles), rows: int(rows), q6: q6}
								if seen[k] {
									continue
								}
								seen[k] = true
								mmahCover(t, k)
							}
						}
					}
				}
			}
		}
	}
	// The shape the passes refuse (clusters of one over rows of two
	// super-blocks: wrong on the GPU for Q4_K and Q5_K, mmahRefused) as the
	// harness launched it: its arithmetic covers its products too.
	for _, rows := range []int{1, 3, 9, 16} {
		for _, q6 := range []bool{false, true} {
			mmahCover(t, mmahShapeCase{in: 512, c: 1, nw: 8, nt: 2, xh: 1, ncl: 2, tiles: 13, rows: rows, q6: q6})
		}
	}
	t.Logf("%d launches covered", len(seen))
}

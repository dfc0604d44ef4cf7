package cuda_test

import (
	"fmt"
	"testing"
)

// The lane arithmetic of attention.cu.tmpl's att_merge_rows and the strided
// quantize_quads after it, transcribed: thread i of a pass takes quad i/PG
// % (HD/4) of row i/PG/(HD/4) with PG adjacent lanes (pg = i % PG), which
// combine by xor shuffles below PG, and a row's 32-group is quantized by
// xor shuffles at PG, 2·PG and 4·PG, its scale written by the lane with
// lane & (8·PG − 1) zero. TestAttMergeRowsCover runs it for every head_dim,
// group and cluster attend_decode takes, so that a merge that takes a quad
// twice or none, or a quantization that mixes rows or groups, is found
// without a GPU.

const attThreads = 128 // ATT_WARPS·32

// attMergePG is att_merge_pg: a quad's threads for rows of at most r rows.
func attMergePG(hd, r int) int {
	pg := 4
	for pg > 1 && r*(hd/4)*pg > attThreads {
		pg /= 2
	}
	return pg
}

// attMergeLane is what thread i of att_merge_rows takes: its row, quad and
// share pg.
type attMergeLane struct{ r, quad, pg int }

func attMergeAt(hd, pg, i int) attMergeLane {
	q := hd / 4
	return attMergeLane{r: i / pg / q, quad: i / pg % q, pg: i % pg}
}

// checkAttMerge checks one merge of own rows of head_dim hd, PG threads a
// quad: every quad of every row once per share, a quad's shares adjacent
// lanes of one warp from a multiple of PG; with q8, each lane's quantize
// shuffles reach the 8 quads of its own row's 32-group at its own share,
// and each group's scale has one writer among the storing lanes.
func checkAttMerge(hd, pg, own int, q8 bool) error {
	q := hd / 4
	type key struct{ r, quad int }
	first := map[key]int{} // the lane index i of share 0
	shares := map[key]int{}
	for base := 0; base < own*q*pg; base += attThreads {
		for tid := range attThreads {
			i := base + tid
			l := attMergeAt(hd, pg, i)
			if l.r >= own {
				continue
			}
			k := key{l.r, l.quad}
			shares[k]++
			if l.pg == 0 {
				if i%pg != 0 {
					return fmt.Errorf("row %d quad %d starts at lane %d, not a multiple of %d", l.r, l.quad, i, pg)
				}
				first[k] = i
			}
		}
	}
	for r := range own {
		for quad := range q {
			k := key{r, quad}
			if shares[k] != pg {
				return fmt.Errorf("row %d quad %d taken %d times, want %d", r, quad, shares[k], pg)
			}
			if i := first[k]; i/32 != (i+pg-1)/32 {
				return fmt.Errorf("row %d quad %d's shares cross a warp at lane %d", r, quad, i)
			}
		}
	}
	if !q8 {
		return nil
	}
	if hd%32 != 0 || 8*pg > 32 {
		return fmt.Errorf("a 32-group is not 8·%d lanes of one warp (head_dim %d)", pg, hd)
	}
	for base := 0; base < own*q*pg; base += attThreads {
		writers, groups := map[key]int{}, map[key]bool{} // (row, group) → scale writers; the groups in the pass
		for tid := range attThreads {
			i := base + tid
			l := attMergeAt(hd, pg, i)
			quads := map[int]bool{}
			for m := range 8 { // the xor shuffles at PG, 2·PG, 4·PG reach lane tid ^ (m·PG)
				p := attMergeAt(hd, pg, base+(tid^(m*pg)))
				if p.r != l.r || p.pg != l.pg || p.quad/8 != l.quad/8 {
					return fmt.Errorf("lane %d (row %d quad %d share %d) shuffles with row %d quad %d share %d", i, l.r, l.quad, l.pg, p.r, p.quad, p.pg)
				}
				quads[p.quad] = true
			}
			if len(quads) != 8 {
				return fmt.Errorf("lane %d's 32-group spans %d quads", i, len(quads))
			}
			if l.r < own {
				groups[key{l.r, l.quad / 8}] = true
				if l.pg == 0 && tid&(8*pg-1) == 0 { // quantize_quads' store: lead and valid
					writers[key{l.r, l.quad / 8}]++
				}
			}
		}
		for k := range groups {
			if writers[k] != 1 {
				return fmt.Errorf("row %d group %d: %d scale writers", k.r, k.quad, writers[k])
			}
		}
	}
	return nil
}

func TestAttMergeRowsCover(t *testing.T) {
	for _, hd := range []int{8, 64, 96, 128, 256} {
		for _, g := range []int{1, 2, 4, 7, 8, 16, 32} {
			ra := min(g, 16)
			for _, cl := range []int{1, 2, 4, 8} {
				for _, r := range []int{ra, (ra + cl - 1) / cl} {
					pg := attMergePG(hd, r)
					if pg < 1 || pg > 4 || pg&(pg-1) != 0 {
						t.Fatalf("head_dim %d, %d rows: %d threads a quad", hd, r, pg)
					}
					for own := 0; own <= r; own++ {
						if err := checkAttMerge(hd, pg, own, hd%32 == 0); err != nil {
							t.Errorf("head_dim %d, group %d, cluster %d, %d of %d rows (%d threads a quad): %v", hd, g, cl, own, r, pg, err)
						}
					}
				}
			}
		}
	}
}

package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/llama-orch/orc/codegen/cuda"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/plans"
	"github.com/llama-orch/orc/runtime"
)

// The paged attention's harness: attnGraph's attention layers (last row
// out, so the plan has a batched step whose output is each row's last
// token's attention) run through runtime/cuda's Batch, against attnData's
// float64 reference.

const pagedLayers, pagedSeqs, pagedBlock, pagedCtx = 1, 4, 16, 1024

// pagedToken is the table row of sequence s's token at position p: each
// sequence its own stream, its ids below the plan's vocabulary (the
// harness's output width), which a batched step holds token ids to.
func pagedToken(s, vocab int) func(p int) int32 {
	return func(p int) int32 { return attnRow(3*p+101*s) % int32(vocab) }
}

// TestCompilePagedAttention compiles the harness's batched plans with nvcc
// for sm_80 and sm_90 (head_dim 8 to 96, window and sinks).
func TestCompilePagedAttention(t *testing.T) {
	if _, err := cuda.FindNVCC(); err != nil {
		t.Skipf("no nvcc, so the emitted CUDA cannot be compiled here: %v", err)
	}
	for _, c := range attnCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := pagedOutput(t, c)
			compiles(t, out.Source)
		})
	}
}

func pagedOutput(t *testing.T, c attnCase) *cuda.Output {
	t.Helper()
	g, man := attnGraph(t, c, pagedLayers, false, pagedCtx)
	out, err := cuda.Generate(g, man, cuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Kernels.Batch) == 0 {
		t.Fatal("the harness's plan has no batched step")
	}
	return out
}

// TestGPUPagedAttention steps four sequences together: prompt chunks of 1
// to 300 tokens beside single decode tokens, past gpt-oss's window of 128,
// with block tables interleaved and descending, and decode-only steps
// (graphs, padded); each row's output (its last token's attention over its
// own sequence) is checked against the float64 reference. A chunk is tiles
// of 16/G tokens, a decode token one, whose warps take quarters of each
// key tile; a tile's key tiles are dealt to the node's splits, so one
// whose keys lie in one key tile writes y itself and a longer one (most
// here) leaves partials that the last of its splits to arrive merges;
// each case also with a key tile a split, so that a tile's queries have
// one count of splits and twice it, up to 8.
func TestGPUPagedAttention(t *testing.T) {
	gpuOnly(t)
	r := rand.New(rand.NewPCG(7, 9))
	var ds []*attnData
	var gs []*ir.Graph
	var mans []*plans.Manifest
	var names []string
	for _, c := range attnCases {
		d := newAttnData(c, r)
		for _, tiles := range []int64{0, 1} { // the passes' least key tiles a split; one, so that tiles mix up to 8 splits
			g, man := attnGraph(t, c, pagedLayers, false, pagedCtx)
			name := c.name
			if tiles > 0 {
				name += ", a key tile a split"
				for _, n := range g.Nodes {
					if n.Op == ir.OpAttention {
						n.Attrs["paged_split_tiles"] = tiles
					}
				}
			}
			ds, gs, mans, names = append(ds, d), append(gs, g), append(mans, man), append(names, name)
		}
	}
	precompile(t, gs, mans)
	// Each step's tokens per sequence (0: the sequence sits out).
	// Decode-only steps replay their bucket's graph: 4 rows, 3 padded to
	// 4, 1.
	steps := [][pagedSeqs]int{{200, 37, 1, 129}, {1, 1, 1, 1}, {300, 0, 5, 1}, {1, 90, 1, 0}, {20, 2, 3, 1}, {1, 1, 1, 200}, {1, 1, 1, 1}, {1, 1, 0, 1},
		{0, 0, 1, 0}, {1, 1, 1, 1}}
	for i, d := range ds {
		t.Run(names[i], func(t *testing.T) {
			dev := openGPUPlan(t, gs[i], mans[i], pagedCtx, d.bytes)
			perSeq := pagedCtx / pagedBlock
			perBlock := int64(pagedLayers) * 2 * pagedBlock * int64(d.c.kvh*d.c.hd) * 2
			b, err := dev.NewBatch(runtime.BatchConfig{Sequences: pagedSeqs, StepTokens: attnMaxTokens, BlockTokens: pagedBlock,
				KVBytes: int64(pagedSeqs*perSeq+1) * perBlock}) // and the block the batch reserves
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			tables := make([][]int32, pagedSeqs)
			for s := range tables {
				for j := range perSeq {
					tables[s] = append(tables[s], int32((perSeq-1-j)*pagedSeqs+s))
				}
			}
			w := d.c.heads * d.c.hd
			ids := min(w, attnRows) // the token ids a step may feed: below the plan's vocabulary, its output width
			pos := make([]int, pagedSeqs)
			for k, step := range steps {
				var rows []runtime.BatchRow
				var who []int
				for s, n := range step {
					if n == 0 {
						continue
					}
					ts := make([]int32, n)
					for j := range ts {
						ts[j] = pagedToken(s, ids)(pos[s] + j)
					}
					rows = append(rows, runtime.BatchRow{Tokens: ts, Pos: pos[s], Blocks: tables[s]})
					who = append(who, s)
				}
				out, err := b.Step(context.Background(), rows)
				if err != nil {
					t.Fatal(err)
				}
				for r, s := range who {
					pos[s] += step[s]
					want := make([]float64, w)
					d.refAt(pagedToken(s, ids), pos[s]-1, want)
					var diff, top float64
					for j, x := range want {
						e := math.Abs(float64(out[r*w+j]) - x)
						if math.IsNaN(e) {
							e = math.Inf(1)
						}
						diff, top = max(diff, e), max(top, math.Abs(x))
					}
					what := fmt.Sprintf("step %d, sequence %d, %d tokens to position %d", k, s, step[s], pos[s]-1)
					if !(diff/top <= attnTolerance) {
						t.Errorf("%s: relative error %.2e over %.0e", what, diff/top, attnTolerance)
					}
				}
			}
		})
	}
}

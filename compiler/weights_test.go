package compiler

import (
	"slices"
	"strings"
	"testing"

	"github.com/llama-orch/orc/compiler/arch"
	"github.com/llama-orch/orc/compiler/synth"
	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/ir"
	"github.com/llama-orch/orc/passes"
	"github.com/llama-orch/orc/plans"
)

// TestWeightTableRowRanges: after fuseQKV cuts phi3's and gpt2's packed
// attn_qkv into row ranges, the weight table still lists every tensor once
// (weights.bin holds each byte once), and under a GPU layout that regroups
// blocks the packed tensor is laid out in q, k, v segments.
func TestWeightTableRowRanges(t *testing.T) {
	for _, preset := range []string{"phi-3-mini-4k-tiny", "gpt2-small-tiny"} {
		f, err := gguf.Open(synthModel(t, preset, synth.QuantQ4_0))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := arch.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		dq, dkv := int64(m.H.NHead*m.H.HeadDim), int64(m.H.NHeadKV*m.H.HeadDim)
		for _, target := range []string{"cpu", "sm_90"} {
			g, err := Lower(m, 16)
			if err != nil {
				t.Fatal(err)
			}
			if err := passes.Run(g, passes.Options{Target: target, Verify: true}); err != nil {
				t.Fatal(err)
			}
			table, err := WeightTable(g, f)
			if err != nil {
				t.Fatalf("%s %s: %v", preset, target, err)
			}
			names := map[string]bool{}
			packed := 0
			for _, w := range table {
				if names[w.Name] {
					t.Errorf("%s %s: tensor %s listed twice", preset, target, w.Name)
				}
				names[w.Name] = true
				if !strings.HasSuffix(w.Name, "attn_qkv.weight") {
					continue
				}
				packed++
				// The CPU reads GGUF order, which needs no segments.
				var want []int64
				wantLayout := ""
				if target != "cpu" {
					want, wantLayout = []int64{dq, dkv, dkv}, "gpu_q4_0"
				}
				if !slices.Equal(w.Segments, want) || w.Layout != wantLayout {
					t.Errorf("%s %s: %s layout %q segments %v, want %q %v", preset, target, w.Name, w.Layout, w.Segments, wantLayout, want)
				}
			}
			if packed != m.H.NLayer {
				t.Errorf("%s %s: %d packed attn_qkv tensors in the table, want %d", preset, target, packed, m.H.NLayer)
			}
		}
	}
}

// TestCheckReadersRefuses: readers of one tensor that no single byte order
// serves, or that do not fit it, are refused with the reason.
func TestCheckReadersRefuses(t *testing.T) {
	weight := func(shape ir.Shape, layout string, rows ...int64) *ir.Node {
		attrs := map[string]any{"name": "qkv", "layout": layout}
		if rows != nil {
			attrs["rows"] = rows
		}
		return &ir.Node{Op: ir.OpWeight, DType: ir.Q8_0, Shape: shape, Attrs: attrs}
	}
	const l = "gpu_q8_0"
	cases := []struct {
		name  string
		nodes []*ir.Node
		want  string
	}{
		{"whole and ranged", []*ir.Node{weight(ir.Shape{96, 64}, l), weight(ir.Shape{64, 64}, l, 0, 64)}, "read whole and by row ranges"},
		{"overlapping", []*ir.Node{weight(ir.Shape{64, 64}, l, 0, 64), weight(ir.Shape{64, 64}, l, 32, 64)}, "overlapping row ranges"},
		{"outside", []*ir.Node{weight(ir.Shape{64, 64}, l, 64, 64)}, "outside tensor qkv's 96 rows"},
		{"shape", []*ir.Node{weight(ir.Shape{32, 32}, l, 0, 32)}, "is [32,32], want [32,64]"},
		{"two layouts", []*ir.Node{weight(ir.Shape{32, 64}, l, 0, 32), weight(ir.Shape{32, 64}, "", 32, 32)}, "layout"},
	}
	for _, c := range cases {
		tensor := plans.Tensor{Name: "qkv", DType: "q8_0", Shape: []int64{96, 64}, Layout: c.nodes[0].Str("layout"), Bytes: 96 * 68}
		err := checkReaders(&tensor, c.nodes)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

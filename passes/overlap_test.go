package passes

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// nodeByID is g's node %id.
func nodeByID(t *testing.T, g *ir.Graph, id int) *ir.Node {
	t.Helper()
	for _, n := range g.Nodes {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("no node %%%d", id)
	return nil
}

// TestLateStartAfterItsQuantize: a late tensor-core qkv that quantizes its
// input first (its norm launches, writing no codes) starts late after its
// own quantize_x8 (quantize_at_end), not after the embed.
func TestLateStartAfterItsQuantize(t *testing.T) {
	g := parseFile(t, "testdata/chooseLateStarts.after.ir")
	embed, norm, qkv := nodeByID(t, g, 3), nodeByID(t, g, 5), nodeByID(t, g, 34)
	delete(qkv.Attrs, "fold_norm")
	delete(norm.Attrs, "writes_codes")
	if err := chooseLateStarts(g); err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(g); err != nil {
		t.Fatal(err)
	}
	if !qkv.Bool("quantize_at_end") || embed.Bool("launch_at_end") || norm.Bool("launch_at_end") {
		t.Errorf("quantize_at_end on the qkv %v, launch_at_end on the embed %v, the norm %v; want true, false, false",
			qkv.Bool("quantize_at_end"), embed.Bool("launch_at_end"), norm.Bool("launch_at_end"))
	}
}

// TestResidualAfterWaitWithoutLateStart: without the qkv's late start the
// embed launches at its start, and the qkv and the attention (its k and v
// stored by the qkv) wait inside their kernels, so the o-proj reads the
// embedding after its wait; where the norm launches (not folded), its
// wrapper's wait completes the embed.
func TestResidualAfterWaitWithoutLateStart(t *testing.T) {
	g := parseFile(t, "testdata/chooseEarlyResiduals.after.ir")
	embed, qkv, oproj := nodeByID(t, g, 3), nodeByID(t, g, 34), nodeByID(t, g, 16)
	delete(embed.Attrs, "launch_at_end")
	delete(qkv.Attrs, "starts_late")
	if err := chooseEarlyResiduals(g); err != nil {
		t.Fatal(err)
	}
	if oproj.Bool("residual_before_wait") {
		t.Errorf("the o-proj reads its residual before its wait with no launch completing the embed")
	}
	delete(qkv.Attrs, "fold_norm")
	if err := chooseEarlyResiduals(g); err != nil {
		t.Fatal(err)
	}
	if !oproj.Bool("residual_before_wait") {
		t.Errorf("the o-proj reads its residual after its wait behind the norm's launch")
	}
}

package passes

import (
	"path/filepath"
	"testing"

	"github.com/llama-orch/orc/ir"
)

// TestFuseAcrossQKNorm: a q/k norm between the projections and RoPE keeps
// neither the qkv fusion nor the RoPE fold from happening.
func TestFuseAcrossQKNorm(t *testing.T) {
	g := parseFile(t, filepath.Join("testdata", "qknorm.before.ir"))
	for _, p := range []func(*ir.Graph) error{fuseQKV, foldRoPE, eliminateDead} {
		if err := p(g); err != nil {
			t.Fatal(err)
		}
		if err := ir.Verify(g); err != nil {
			t.Fatalf("%v\n%s", err, ir.Print(g))
		}
	}
	ops := map[ir.Op]int{}
	for _, n := range g.Nodes {
		ops[n.Op]++
	}
	if ops[ir.OpQKV] != 1 || ops[ir.OpNormRoPE] != 2 || ops[ir.OpLinear]+ops[ir.OpRoPE]+ops[ir.OpHeadRMSNorm] != 0 {
		t.Errorf("ops after fusing: %v", ops)
	}
	checkGolden(t, "qknorm.after.ir", ir.Print(g))
}

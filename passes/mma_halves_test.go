package passes

import (
	"testing"

	"github.com/llama-orch/orc/ir"
)

// MMAHalvesShape at Phi-3-mini's batched decode products (16 tokens a
// block): clusters dividing the row's super-blocks, within the target's
// cluster limit (none on sm_80), shared memory for their blocks an SM,
// no more clusters than a warp a tile nor than mmahResidentShare of what
// the GPCs hold at once (the SwiGLU's 43 clusters of 6 ran in two waves
// on an H200), more blocks than SMs where two fit an SM, the
// activations in mmahXHalves halves, and rounds covering every tile;
// the o-proj's 192 tiles of 3072 split over clusters (a block a tile
// would leave most SMs idle); none for rows of no whole super-blocks, nor
// on sm_80 where a block's whole row of activations passes its shared
// memory or its blocks too few (mmahLongWalk); no clusters of one over
// rows of 512 (mmahRefused); none for
// Qwen2.5-0.5B's down (rows of 19 super-blocks: 7 blocks, each warp a whole
// row, against mma_tokens' 56).
func TestMMAHalvesShape(t *testing.T) {
	for _, arch := range []string{"sm_90", "sm_80"} {
		g, err := GPUTarget(arch)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name      string
			in, tiles int64
		}{
			{"qkv", 3072, 576}, {"gate+up", 3072, 1024}, {"o-proj", 3072, 192}, {"down", 8192, 192}, {"tiny", 256, 16},
		} {
			sh, ok := g.MMAHalvesShape(c.in, c.tiles, 512)
			s := c.in / 256
			if !ok {
				if g.TokensCluster > 1 { // sm_80: one block a cluster, too few for rows this long (mmahLongWalk) or too wide for its shared memory
					t.Errorf("%s %s: no shape", arch, c.name)
				}
				continue
			}
			blocks := sh.Cluster * sh.Clusters
			perSM := g.SmemPerSM / (MMAHalvesSmem(s/sh.Cluster, 2, sh.Warps, sh.XHalves) + 1<<10)
			if s%sh.Cluster != 0 || sh.Cluster > g.TokensCluster || perSM < 1 || blocks > min(2, perSM)*g.SMs ||
				sh.Clusters > ceilDiv(c.tiles, sh.Warps) || sh.Warps != mmahWarps || sh.XHalves != mmahXHalves ||
				sh.Cluster > 1 && sh.Clusters > g.SMs/g.GPCSMs*(min(2, perSM)*g.GPCSMs/sh.Cluster) {
				t.Errorf("%s %s: %+v (%d super-blocks a row, %d blocks an SM fit)", arch, c.name, sh, s, perSM)
			}
			if c.name == "o-proj" && arch == "sm_90" && sh.Cluster == 1 {
				t.Errorf("%s o-proj: %+v, one block a tile", arch, sh)
			}
			if arch == "sm_90" && sh.Cluster > 1 && sh.Clusters > mmahResidentShare*g.SMs/g.GPCSMs*(min(2, perSM)*g.GPCSMs/sh.Cluster)/100 {
				t.Errorf("%s %s: %+v, past %d %% of the clusters the GPCs hold", arch, c.name, sh, mmahResidentShare)
			}
			// Two blocks an SM run side by side (TestGPUMMATokensTiming,
			// H200): the SwiGLU's 1,024 tiles take more blocks than SMs
			// where two fit an SM.
			if c.name == "gate+up" && arch == "sm_90" && min(2, perSM) == 2 && blocks <= g.SMs {
				t.Errorf("%s gate+up: %+v, %d blocks for %d SMs that hold two each", arch, sh, blocks, g.SMs)
			}
			if arch == "sm_80" && sh.Cluster != 1 {
				t.Errorf("sm_80 %s: clusters of %d", c.name, sh.Cluster)
			}
			t.Logf("%s %-8s %+v", arch, c.name, sh)
		}
		if _, ok := g.MMAHalvesShape(896, 56, 512); ok {
			t.Errorf("%s: a shape for rows of 896", arch)
		}
		if sh, ok := g.MMAHalvesShape(4864, 56, 16); ok {
			t.Errorf("%s: %+v for rows of 4864, 56 tiles", arch, sh)
		}
		if _, ok := g.MMAHalvesCluster(3072, 576, 512, 5); ok {
			t.Errorf("%s: clusters of 5 for 12 super-blocks a row", arch)
		}
		for _, tokens := range []int64{16, 64, 512} { // mmahRefused
			if sh, ok := g.MMAHalvesShape(512, 13, tokens); ok && sh.Cluster == 1 {
				t.Errorf("%s: %+v for rows of 512 at %d tokens, clusters of one", arch, sh, tokens)
			}
			if _, ok := g.MMAHalvesCluster(512, 13, tokens, 1); ok {
				t.Errorf("%s: clusters of one for rows of 512 at %d tokens", arch, tokens)
			}
		}
	}
}

// mmaHalves takes Q4_K, and Q5_K and Q6_K in their split layouts, rows of
// whole super-blocks, one layout for all of a node's weights.
func TestMMAHalvesWeights(t *testing.T) {
	x := &ir.Node{Op: ir.OpRMSNorm, DType: ir.F32, Shape: ir.Shape{ir.T, 512}}
	weight := func(dt ir.DType, laid bool) *ir.Node {
		w := &ir.Node{Op: ir.OpWeight, DType: dt, Shape: ir.Shape{64, 512}, Attrs: map[string]any{}}
		if laid {
			w.Attrs["layout"] = LayoutName(dt)
		}
		return w
	}
	for _, c := range []struct {
		name string
		ws   []*ir.Node
		want bool
	}{
		{"Q4_K", []*ir.Node{weight(ir.Q4_K, false)}, true},
		{"Q5_K split", []*ir.Node{weight(ir.Q5_K, true)}, true},
		{"Q6_K split", []*ir.Node{weight(ir.Q6_K, true)}, true},
		{"Q6_K in GGUF order", []*ir.Node{weight(ir.Q6_K, false)}, false},
		{"Q8_0", []*ir.Node{weight(ir.Q8_0, true)}, false},
		{"Q5_K split and Q6_K split", []*ir.Node{weight(ir.Q5_K, true), weight(ir.Q6_K, true), weight(ir.Q5_K, true)}, false},
	} {
		op := ir.OpLinear
		if len(c.ws) == 3 {
			op = ir.OpQKV
		}
		n := &ir.Node{Op: op, DType: ir.F32, Shape: ir.Shape{ir.T, 64}, Inputs: append([]*ir.Node{x}, c.ws...), Attrs: map[string]any{}}
		if op == ir.OpQKV {
			n.Attrs["parts"] = []int64{64, 64, 64}
			n.Shape = ir.Shape{ir.T, 192}
		}
		if got := mmaHalves(n); got != c.want {
			t.Errorf("%s: mmaHalves %v, want %v", c.name, got, c.want)
		}
	}
}

// swiglu_mmah's gate is SiLU's: a SwiGLU linear of another gate activation
// (Gemma's tanh GELU) keeps mma_tokens.
func TestMMAHalvesGate(t *testing.T) {
	x := &ir.Node{Op: ir.OpRMSNorm, DType: ir.F32, Shape: ir.Shape{ir.T, 512}}
	w := &ir.Node{Op: ir.OpWeight, DType: ir.Q4_K, Shape: ir.Shape{128, 512}, Attrs: map[string]any{}}
	for _, c := range []struct {
		act  string
		want bool
	}{{"", true}, {string(ir.GateSiLU), true}, {string(ir.GateGELUTanh), false}} {
		n := &ir.Node{Op: ir.OpSwiGLULinear, DType: ir.F32, Shape: ir.Shape{ir.T, 64}, Inputs: []*ir.Node{x, w}, Attrs: map[string]any{}}
		if c.act != "" {
			n.Attrs["act"] = c.act
		}
		if got := mmaHalves(n); got != c.want {
			t.Errorf("act %q: mmaHalves %v, want %v", c.act, got, c.want)
		}
	}
}

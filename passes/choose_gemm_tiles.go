package passes

import "github.com/llama-orch/orc/ir"

// gemmTileAttrs are the attributes chooseGEMMTiles records (ir/gemm_tiles.go);
// it drops them first, so that it can run again.
var gemmTileAttrs = []string{"gemm_tile_m", "gemm_tile_n", "gemm_splits", "gemm_stages"}

// chooseGEMMTiles decides, for the graph's GPU target, the tiles, K splits
// and x stages of the tensor-core GEMM (codegen/cuda's gemm_linear, gemm_swiglu,
// gemm_qkv) of every matrix node whose prefill, batched-step or batched
// decode kernel is that GEMM, from its weight rows, its K and the tokens a
// step takes (max_tokens), and records them on the node: GEMMTiles.
func chooseGEMMTiles(g *ir.Graph) error {
	gpu, mt, err := graphGPUTokens(g)
	if err != nil {
		return err
	}
	for _, n := range g.Nodes {
		for _, k := range gemmTileAttrs {
			delete(n.Attrs, k)
		}
		if !isMatrix(n) || !takesGEMM(n) {
			continue
		}
		x := n.Inputs[0]
		t := gpu.GEMMTiles(mt, GEMMRows(n), x.Shape[len(x.Shape)-1])
		n.Attrs["gemm_tile_m"], n.Attrs["gemm_tile_n"], n.Attrs["gemm_splits"], n.Attrs["gemm_stages"] = t.M, t.N, t.Splits, t.Stages
	}
	return nil
}

// takesGEMM reports whether a schedule runs n's product as the GEMM.
func takesGEMM(n *ir.Node) bool {
	for _, k := range []string{"prefill_kernel", "batch_kernel", "batch_decode_kernel"} {
		if n.Str(k) == ir.KernelGEMM {
			return true
		}
	}
	return false
}

// GEMMRows is the weight rows matrix node n's GEMM walks: a linear's
// outputs, a SwiGLU's gate and up rows (two an output), a qkv's q, k and v
// rows.
func GEMMRows(n *ir.Node) int64 {
	out := n.Shape[len(n.Shape)-1]
	if n.Op == ir.OpSwiGLULinear {
		return 2 * out
	}
	return out
}

// GEMMTiles are a GEMM's tiles (ir/gemm_tiles.go): M tokens and N weight
// rows a CTA, its K cut into Splits ranges of whole K-steps, Stages x tiles
// in flight.
type GEMMTiles struct{ M, N, Splits, Stages int64 }

// GEMMBlocks is the CTAs an SM a dense GEMM of m tokens a CTA is bounded
// to (__launch_bounds__): with m = 64, 2 (128 registers a thread), which
// hold the tile's 32 accumulators and a K-step's raw weight groups in
// flight; the m = 128 tiles hold twice the accumulators: 1 (bounded to 2,
// a Q4_K SwiGLU spilled 244 bytes, a Q6_K down 692, nvcc 11.8 for sm_90).
func GEMMBlocks(m int64) int64 {
	if m == 128 {
		return 1
	}
	return 2
}

// GEMMPipeSmem is the dynamic shared memory of a CTA of the GEMMs' pipeline
// (codegen/cuda's gemm_pipe: the dense GEMMs and the MoE's) of m rows of x,
// n weight rows and stages x tiles: the x tiles and two weight tiles, 144
// bytes a row (64 halves and 8 of padding, so that ldmatrix's 8 rows hit
// distinct banks).
func GEMMPipeSmem(m, n, stages int64) int64 { return (stages*m + 2*n) * 144 }

// GEMMStages is the most x stages, up to ir.MaxGEMMStages, whose shared
// memory lets blocks CTAs of m × n tiles share an SM (each also reserves
// 1 KiB), at least 2: 4 on an H100 or H200; on an A100 2 at 128 × 128 and
// 2 CTAs, 4 at 64 × 128.
func (gpu GPU) GEMMStages(m, n, blocks int64) int64 {
	stages := int64(2)
	for s := int64(3); s <= ir.MaxGEMMStages; s++ {
		if blocks*(GEMMPipeSmem(m, n, s)+1024) <= gpu.SmemPerSM {
			stages = s
		}
	}
	return stages
}

const (
	// GEMMStep is the K-step of the GEMM (gemm.cu.tmpl's GEMM_BK).
	GEMMStep = 64
	// gemmResident is the CTAs an SM the split rule counts on: the 64-token
	// tiles run 2 (GEMMBlocks); the 128-token ones one (nvcc 13 for sm_90
	// gives them 187 to 254 registers), where the split rule's one round of
	// 2 an SM takes two rounds of one: a split in s still shortens the
	// product where s > 2 or the whole-K grid takes more than one round,
	// and where neither, costs about its whole-K time (gemmFillsAlone).
	gemmResident = 2
	// gemmMinSplitSteps is the fewest K-steps a split takes.
	gemmMinSplitSteps = 4
)

// GEMMTiles are the tiles of a product of rows weight rows over in
// elements, in plans whose steps take up to maxTokens tokens.
//
// A CTA's K-step is a latency chain (load, dequantize, store, barrier,
// MMA) of about the same time whatever its tiles, so a product takes about
// its waves of CTAs (gemmResident an SM) times each CTA's K-steps. Without
// splits (the tiles where the grid is full):
//
//   - N: 128 rows (more reuse of each staged x tile) where that still gives
//     192 CTAs or more of 64 tokens at maxTokens (Phi-3's 3072-row o and
//     down projections at 512 tokens: pp512 40.2 → 36.0 ms on the H100
//     against a 256 threshold), else 64, so that narrow products (Qwen2.5's
//     896 outputs) keep the SMs busy.
//   - M: 128 tokens (each dequantized weight tile serves twice the tokens,
//     and the CTA reads half the weight bytes per MMA) where that still
//     gives the target's GEMMFill CTAs (about one an SM), else 64.
//
// Where those CTAs are fewer than the SMs run at once (a down projection:
// Gemma-3-4B's 160 tiles of 160 K-steps at 512 tokens), but for 128-token
// tiles that already give 9 in 10 SMs their one CTA (gemmFillsAlone:
// Llama-3.1-8B's 128 tiles of 224 K-steps), K is cut into splits over
// tiles of 128 × 128 (64 tokens where a step takes no more), each split a
// CTA, so that the SMs run more, shorter chains: at most as many splits as
// keep the CTAs within one round of the SMs (more would add rounds and
// partials, not CTAs at once), each of at least gemmMinSplitSteps K-steps.
// With s splits the last CTA of a tile reads s partial tiles after the
// others wrote theirs, which costs about s+1 K-steps (gemmCost). The
// splits are the count of least cost, where that is at most 4/5 of the
// unsplit tiles'. At 512 tokens on an H100 or H200: Gemma-3-4B's down
// takes 3 splits (240 CTAs of 53 or 54 K-steps), Phi-3's down 2,
// Qwen2.5-0.5B's 7; the SwiGLUs, Llama's qkv, down and o projections and
// Gemma's qkv run unsplit.
func (gpu GPU) GEMMTiles(maxTokens, rows, in int64) GEMMTiles {
	t := gpu.WholeKTiles(maxTokens, rows)
	slots, steps := gemmResident*gpu.SMs, ceilDiv(in, GEMMStep)
	if gemmCTAs(t, maxTokens, rows) >= slots || gpu.gemmFillsAlone(t, maxTokens, rows) {
		return t
	}
	unsplit := gemmCost(t, maxTokens, rows, steps, slots)
	best, bestCost := t, unsplit
	wide := GEMMTiles{M: 128, N: 128, Splits: 1}
	if maxTokens <= 64 {
		wide.M = 64
	}
	wide.Stages = gpu.GEMMStages(wide.M, wide.N, GEMMBlocks(wide.M))
	tiles := gemmCTAs(wide, maxTokens, rows)
	for s := int64(2); s <= ir.MaxGEMMSplits && s*gemmMinSplitSteps <= steps && s*tiles <= slots; s++ {
		wide.Splits = s
		if c := gemmCost(wide, maxTokens, rows, steps, slots); 5*c <= 4*unsplit && c < bestCost {
			best, bestCost = wide, c
		}
	}
	return best
}

// gemmFillsAlone reports whether whole-K tiles t of 128 tokens, one CTA an
// SM (GEMMBlocks), take one round that already gives at least 9 in 10 SMs
// their CTA: splits in two would only add a round. Llama-3.1-8B's down at 512 tokens (128 CTAs
// on 132 SMs) took 397 µs in Q6_K, 332 in Q4_K, whole, against 405 and 339
// split in two, its o projection 106 against 115 (H200).
func (gpu GPU) gemmFillsAlone(t GEMMTiles, maxTokens, rows int64) bool {
	ctas, round := gemmCTAs(t, maxTokens, rows), GEMMBlocks(t.M)*gpu.SMs
	return t.M == 128 && ctas <= round && 10*ctas >= 9*round
}

// WholeKTiles are GEMMTiles' tiles without splits (N, then M, then the
// stages).
func (gpu GPU) WholeKTiles(maxTokens, rows int64) GEMMTiles {
	t := GEMMTiles{M: 64, N: 64, Splits: 1}
	if ceilDiv(rows, 128)*ceilDiv(maxTokens, 64) >= 192 {
		t.N = 128
	}
	if ceilDiv(rows, t.N)*ceilDiv(maxTokens, 128) >= gpu.GEMMFill {
		t.M = 128
	}
	t.Stages = gpu.GEMMStages(t.M, t.N, GEMMBlocks(t.M))
	return t
}

// gemmCTAs is the CTAs of tiles t at maxTokens.
func gemmCTAs(t GEMMTiles, maxTokens, rows int64) int64 {
	return ceilDiv(rows, t.N) * ceilDiv(maxTokens, t.M) * t.Splits
}

// gemmCost is a product's time in K-steps of one CTA: its rounds of slots
// CTAs, each walking its split's K-steps, and with s splits s+1 more, for
// writing the partial tiles and the merge's reading them.
func gemmCost(t GEMMTiles, maxTokens, rows, steps, slots int64) int64 {
	c := ceilDiv(gemmCTAs(t, maxTokens, rows), slots) * ceilDiv(steps, t.Splits)
	if t.Splits > 1 {
		c += t.Splits + 1
	}
	return c
}

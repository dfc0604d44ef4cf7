package passes

import "github.com/llama-orch/orc/ir"

// MMAHalves is how a matrix node's mma_halves kernel (codegen/cuda's
// mma_halves.cu.tmpl) runs, as chooseKernels records it (mmah_cluster,
// mmah_warps, mmah_x_halves, mmah_clusters): thread-block clusters of
// Cluster blocks, each block a range of in/256/Cluster super-blocks of
// every row and Warps warps, each warp a tile of 16 rows a round, the
// activations as XHalves f16 halves (2: hi + lo, 22 bits; 1: f16);
// Clusters of them.
type MMAHalves struct{ Cluster, Warps, XHalves, Clusters int64 }

// Record writes the shape on node n (mmah_cluster, mmah_warps,
// mmah_x_halves, mmah_clusters).
func (s MMAHalves) Record(n *ir.Node) {
	n.Attrs["mmah_cluster"], n.Attrs["mmah_warps"], n.Attrs["mmah_x_halves"], n.Attrs["mmah_clusters"] = s.Cluster, s.Warps, s.XHalves, s.Clusters
}

// mmahWarps is an mma_halves block's warps: 8, ir.MMAHBlocks blocks an SM
// at most.
const mmahWarps = 8

// mmahLongWalk is the super-blocks a round of a warp's walk from which an
// mma_halves shape needs blocks on half the SMs or more: fewer blocks each
// walking that many leave the GPU idle where mma_tokens' one round splits
// every tile's row over 8 warps (Qwen2.5-0.5B's down, rows of 19
// super-blocks in 7 blocks: 44.9 µs at 2 tokens against mma_tokens' 16.2,
// H200).
const mmahLongWalk = 8

// mmahResidentShare is the percentage of residentClusters an mma_halves
// grid takes at most: the GPCs' estimate runs a little over what the
// hardware schedules at once (an H200's clusters of 3 and 4 blocks at two
// an SM: 79 and 62 active against 80 and 64), and a cluster past them
// waits for a second wave. With the waves counted instead of an SM's
// blocks (which took two blocks an SM for twice one's time), Phi-3-mini's
// 16-token products at H200 (TestGPUMMATokensTiming, 2026-11-28): SwiGLU
// 39.9-42.7 -> 30.9 µs (clusters of 6 blocks, 36 of them, against 3, 43),
// head 97 -> 71.5, Q4_K down 24.6-25.1 -> 22.3, qkv and o-proj level.
// Again one form a run (2026-11-29; ncu: 39 clusters of 6 active at once,
// the estimate 40): the rule's 32 and 36 clusters of 6 against all 40,
// SwiGLU 34.9 against 46.0-46.6 µs, qkv 24.8-30.3 against 33.3-35.2, head
// 67.3-69.8 against 100.1-103.6.
const mmahResidentShare = 90

// mmahXHalves is the f16 halves an mma_halves kernel takes its activations
// as: 1, x rounded to f16, one mma a k-step (TestGPUMMATokensTiming, H200:
// 0–10 % faster than hi + lo's two at Phi-3-mini's widths). Its error,
// the rounding times the kernel's centred codes sc·(q − CQ), keeps the
// batched step's logits within 1.7e-3 of the CPU device's on
// Phi-3-mini's real-width cut (TestGPUBatchMatchesCPU, bound 2e-3; 3.2e-3
// with the unsigned codes sc·q).
const mmahXHalves = 1

// MMATokensNTiles is the n-tiles of 8 tokens a block of the token
// products (mma_tokens, mma_halves) takes in steps of at most maxTokens
// tokens: MMATokensMaxTiles, fewer where the steps have fewer tokens.
func MMATokensNTiles(maxTokens int64) int64 { return min(MMATokensMaxTiles, ceilDiv(maxTokens, 8)) }

// MMAHalvesSmem is an mma_halves block's dynamic shared memory
// (mmah_run's): its range of sr super-blocks of nt·8 tokens' activations
// as xh f16 halves (8 bytes four elements a token each), their slice sums
// as two halves (8 bytes two slices a token), and two rounds of its nw
// warps' tile sums.
func MMAHalvesSmem(sr, nt, nw, xh int64) int64 {
	tp := 8 * nt
	return sr*64*tp*8*xh + sr*4*tp*8 + 2*nw*16*tp*4
}

// mmahLayout reports whether weight w has mma_halves fragments (MmaH):
// Q4_K (its GPU layout is GGUF order), Q5_K and Q6_K in their split GPU
// layouts.
func mmahLayout(w *ir.Node) bool {
	switch w.DType {
	case ir.Q4_K:
		return true
	case ir.Q5_K, ir.Q6_K:
		return layoutOf(w).laidOut()
	}
	return false
}

// mmaHalves reports whether matrix node n can run as mma_halves: on the
// integer path, its weights of one dtype and layout with MmaH fragments
// (q, k and v's accessors differ in their blocks alone), rows of whole
// super-blocks.
func mmaHalves(n *ir.Node) bool {
	if !intDot(n) || n.GateAct() != ir.GateSiLU { // swiglu_mmah's gate is SiLU's
		return false
	}
	x, w := n.Inputs[0], n.Inputs[1]
	if !mmahLayout(w) || x.Shape[len(x.Shape)-1]%256 != 0 {
		return false
	}
	for _, o := range n.Inputs[2:] {
		if o.Op == ir.OpWeight && len(o.Shape) == 2 && (o.DType != w.DType || o.Str("layout") != w.Str("layout")) {
			return false
		}
	}
	return true
}

// MMAHalvesShape chooses an mma_halves kernel's shape for tiles tiles of
// 16 rows of in elements over steps of at most maxTokens tokens: of the
// clusters (a divisor of the row's super-blocks, at most TokensCluster,
// none mmahRefused) and their number (at most two blocks an SM, as their
// shared memory allows, no more than mmahResidentShare of the clusters the
// GPCs hold at once, and a warp a tile), the one of least cost,
// counted in ninths of a warp super-block (a 16-row tile's 256 elements,
// about 75 ns of an SM at 16 tokens): the waves of resident blocks (one
// where every block is resident at once: two blocks an SM run side by
// side, each warp waiting on its own loads) times a block's rounds'
// super-blocks and their staging's
// instructions (a ninth of a super-block per 256 elements of a token), the
// staging's bytes through L2 (every block's range of the f32 activations
// at about 5 TB/s), and each round's barrier and epilogue (8 super-blocks
// for a cluster's, 2 without). Ties go to more blocks. The second result
// is false where no shape fits.
func (g GPU) MMAHalvesShape(in, tiles, maxTokens int64) (MMAHalves, bool) {
	var best MMAHalves
	bestCost := int64(-1)
	for c := int64(1); c <= g.TokensCluster; c++ {
		if sh, cost, ok := g.mmahClusters(in, tiles, maxTokens, c); ok && (bestCost < 0 || cost < bestCost || cost == bestCost && sh.Clusters*sh.Cluster > best.Clusters*best.Cluster) {
			best, bestCost = sh, cost
		}
	}
	return best, bestCost >= 0
}

// MMAHalvesCluster is MMAHalvesShape's choice among shapes of clusters of
// c blocks (false where none fits; the timing harness compares them).
func (g GPU) MMAHalvesCluster(in, tiles, maxTokens, c int64) (MMAHalves, bool) {
	sh, _, ok := g.mmahClusters(in, tiles, maxTokens, c)
	return sh, ok
}

// mmahClusters is the least costly shape of clusters of c blocks
// (MMAHalvesShape's cost) and its cost.
func (g GPU) mmahClusters(in, tiles, maxTokens, c int64) (MMAHalves, int64, bool) {
	if in%256 != 0 || tiles <= 0 || c < 1 || c > g.TokensCluster || in/256%c != 0 || mmahRefused(in, c) {
		return MMAHalves{}, 0, false
	}
	nt, nw := MMATokensNTiles(maxTokens), int64(mmahWarps)
	sr := in / 256 / c
	shape := MMAHalves{Cluster: c, Warps: nw, XHalves: mmahXHalves}
	perSM := g.mmahPerSM(sr, nt, shape)
	if perSM < 1 { // its shared memory does not fit an SM
		return MMAHalves{}, 0, false
	}
	barrier := int64(2)
	if c > 1 {
		barrier = 8
	}
	var best MMAHalves
	bestCost := int64(-1)
	most := max(1, g.residentClusters(c, perSM)*mmahResidentShare/100)
	for cl := int64(1); cl <= most && cl <= ceilDiv(tiles, nw); cl++ {
		rounds, blocks := ceilDiv(tiles, cl*nw), cl*c
		cost := ceilDiv(blocks, perSM*g.SMs)*(9*rounds*nw*sr+8*nt*sr) + blocks*sr*8*nt/41 + 9*rounds*barrier
		if bestCost < 0 || cost <= bestCost {
			best, bestCost = shape, cost
			best.Clusters = cl
		}
	}
	if best.Clusters*c < g.SMs/2 && sr >= mmahLongWalk {
		return MMAHalves{}, 0, false
	}
	return best, bestCost, bestCost >= 0
}

// mmahPerSM is the blocks of shape sh over ranges of sr super-blocks and
// nt n-tiles an SM holds: ir.MMAHBlocks at most, as their shared memory
// allows (0 where one does not fit).
func (g GPU) mmahPerSM(sr, nt int64, sh MMAHalves) int64 {
	return min(ir.MMAHBlocks, g.SmemPerSM/(MMAHalvesSmem(sr, nt, sh.Warps, sh.XHalves)+1<<10))
}

// MMAHalvesResident is the clusters of shape sh over rows of in elements,
// in steps of at most maxTokens tokens, that the GPCs hold at once
// (residentClusters; 0 where a block does not fit an SM): the bound
// MMAHalvesShape takes mmahResidentShare of.
func (g GPU) MMAHalvesResident(in, maxTokens int64, sh MMAHalves) int64 {
	perSM := g.mmahPerSM(in/256/sh.Cluster, MMATokensNTiles(maxTokens), sh)
	if perSM < 1 {
		return 0
	}
	return g.residentClusters(sh.Cluster, perSM)
}

// residentClusters is the most clusters of c blocks, perSM blocks an SM,
// that the GPU runs at once: a cluster's blocks share one GPC, so each GPC
// (of at least GPCSMs SMs) holds floor(perSM·GPCSMs / c) of them. More go
// in a second wave: Phi-3-mini's SwiGLU in 43 clusters of 6 (2 blocks an
// SM; an H200's GPCs hold 42) took about twice a wave's time.
func (g GPU) residentClusters(c, perSM int64) int64 {
	if c == 1 || g.GPCSMs == 0 {
		return perSM * g.SMs / c
	}
	return g.SMs / g.GPCSMs * (perSM * g.GPCSMs / c)
}

// mmahRefused reports the shapes no mma_halves kernel takes: clusters of
// one block over rows of two super-blocks (512 elements). On the H200
// (CUDA 13.0) that kernel gave wrong Q4_K and Q5_K products (Q6_K's were
// right): relative errors of 0.16 to 2.2 at every step size, on any
// weights and activations, with its launches synchronised or not, in a
// plan of its own or beside others; while its index arithmetic covers
// every element and token once (TestMMAHalvesCover) and the same kernel
// is right over one, three and four super-blocks a block, and over two in
// clusters of two. Until the cause is found, those rows take clusters of
// two, or mma_tokens where the target has no clusters.
func mmahRefused(in, c int64) bool { return c == 1 && in/256 == 2 }

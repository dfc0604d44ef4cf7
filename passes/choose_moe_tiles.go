package passes

import (
	"fmt"

	"github.com/llama-orch/orc/ir"
)

// chooseMoETiles decides, for the graph's GPU target, the tiles of each
// MoE's expert GEMMs (codegen/cuda's moe_gate_up_gemm and moe_down_gemm,
// which a prefill, a batched step and, where the experts have no
// tensor-core fragments, a batched decode step run) from the slots a full
// step gives an expert, and the down rows a warp of its integer decode
// GEMV takes (moe_down_sum_q8), and records both on the node
// (ir/moe_tiles.go): MoETiles, MoEDownRowsOf.
func chooseMoETiles(g *ir.Graph) error {
	gpu, mt, err := graphGPUTokens(g)
	if err != nil {
		return err
	}
	for _, n := range g.Nodes {
		if n.Op != ir.OpMoE {
			continue
		}
		w := ir.MoEInputs(n)
		if len(w.Gate.Shape) != 3 {
			return fmt.Errorf("moe %%%d: gate experts are %v, want [E, F, D]", n.ID, w.Gate.Shape)
		}
		f, d := w.Gate.Shape[1], w.Gate.Shape[2]
		wide := MoEWideTileTypes[w.Gate.DType] && MoEWideTileTypes[w.Down.DType]
		t := gpu.MoETiles(mt, n.Int("experts"), n.Int("top_k"), min(2*f, d), wide)
		n.Attrs["moe_tile_m"], n.Attrs["moe_tile_n"], n.Attrs["moe_stages"] = t.M, t.N, t.Stages
		lanes := MoEDownLanesOf(f, d, n.Int("top_k"), w.Down.DType)
		n.Attrs["moe_down_lanes"] = lanes
		n.Attrs["moe_down_rows"] = MoEDownRowsOf(n.Int("top_k"), lanes)
	}
	return nil
}

// MoETiles are an MoE's GEMM tiles (ir/moe_tiles.go): M slots of one
// expert and N weight rows a CTA, Stages x tiles in flight.
type MoETiles struct{ M, N, Stages int64 }

// MoEGEMMBlocks is the CTAs an SM the MoE GEMMs are bounded to
// (__launch_bounds__: 128 registers a thread).
const MoEGEMMBlocks = 2

// MoEGEMMSmem is the dynamic shared memory of an MoE GEMM CTA of tiles t
// (GEMMPipeSmem).
func MoEGEMMSmem(t MoETiles) int64 { return GEMMPipeSmem(t.M, t.N, t.Stages) }

// MoEWideTileTypes are the expert weight types whose GEMMs take 128-slot
// tiles: those whose raw groups in flight and dequantized values leave a
// thread room for the tile's 64 accumulators in 128 registers (nvcc 11.8:
// no spills on sm_90, MXFP4's 16 bytes on sm_80). K-quants' 64-element
// groups spilled 24 to 80 bytes on sm_90.
var MoEWideTileTypes = map[ir.DType]bool{ir.MXFP4: true, ir.F16: true, ir.BF16: true}

// MoETiles are the tiles of an MoE of E experts, top_k k, whose narrower
// product has rows weight rows (min(2F, D)), in plans whose steps take up
// to maxTokens tokens; wide: its weight types take 128-slot tiles
// (MoEWideTileTypes):
//
//   - M: 128 where wide and an expert may hold more than 64 slots of a step
//     (it holds at most one a token), else 64. A CTA's warps skip the m16
//     tiles past its slots, so a 128-slot tile costs an expert of 64 slots
//     or fewer no more MMAs than a 64-slot one, and one of more half the
//     dequantized weight tiles (gpt-oss at pp2048: 256 slots an expert).
//   - N: 128 rows where a full step's GEMM of rows, at the average
//     maxTokens·k/E slots an expert, still gives every SM MoEGEMMBlocks
//     CTAs; else 64, twice the CTAs.
//   - Stages: the most whose shared memory lets MoEGEMMBlocks CTAs share
//     an SM (GEMMStages).
func (gpu GPU) MoETiles(maxTokens, experts, k, rows int64, wide bool) MoETiles {
	t := MoETiles{M: 64, N: 128}
	if wide && maxTokens > 64 {
		t.M = 128
	}
	avg := ceilDiv(maxTokens*k, experts)
	if ceilDiv(rows, t.N)*experts*ceilDiv(avg, t.M) < MoEGEMMBlocks*gpu.SMs {
		t.N = 64
	}
	t.Stages = gpu.GEMMStages(t.M, t.N, MoEGEMMBlocks)
	return t
}

// MoEDownRows is the down rows a warp of moe_down_sum_q8 takes of its
// expert where top_k exceeds 4: each holds its raw weight groups and the
// block's picks in registers across the wait. Qwen3-30B-A3B's top-8 at 8
// rows took 252 registers a thread (one block an SM, 0.3 TB/s on an H200);
// at 2 its decode step ran 5.6 % faster than at 4, its down launches about
// 4 µs faster each than at 8 (H200, 2026-11-27; both measured with gate+up
// rows split between two warps, since dropped).
const MoEDownRows = 2

// MoEDownRowsOf is the down rows each row set of a warp takes in an MoE of
// top_k k whose down rows take lanes lanes (MoEDownLanesOf): one where a
// warp holds several row sets (their lanes' groups are its registers), all
// k up to 4 (gpt-oss's top-4 geometry, 8 rows a block, as tuned), else
// MoEDownRows (a block then owns MoEWarps/k·rows·32/lanes output rows).
func MoEDownRowsOf(k, lanes int64) int64 {
	switch {
	case lanes < 32:
		return 1
	case k <= 4:
		return k
	}
	return MoEDownRows
}

// MoEDownLanesOf is the lanes of a moe_down_sum_q8 warp that share one
// down row of f elements of type dt, in an MoE of width d and top_k k: 32
// where the row has 32 weight groups or more (lane j takes groups j, j +
// 32, ...), else the largest power of two that divides its groups, so that
// every lane has whole groups and the warp takes 32/lanes rows at once
// (doubled while a block's rows, MoEWarps/k·32/lanes, do not divide d).
// Qwen3-30B-A3B's down rows of 768 (12 groups of 64) take 4: at 32 twenty
// lanes of every warp idled and a warp held two rows (0.45 TB/s of routed
// weights, H200, 2026-11-28).
func MoEDownLanesOf(f, d, k int64, dt ir.DType) int64 {
	ng := f / intDotGroup(dt)
	if ng >= 32 || ng < 1 || k < 1 || MoEWarps%k != 0 {
		return 32
	}
	lanes := ng & -ng
	for lanes < 32 && d%(MoEWarps/k*32/lanes) != 0 {
		lanes *= 2
	}
	return lanes
}

// intDotGroup is the elements of a weight group on the integer path (the
// accessors' GROUP in codegen/cuda's weights.cu.tmpl): 64 for the K-quants,
// 32 for the others it takes.
func intDotGroup(dt ir.DType) int64 {
	switch dt {
	case ir.Q4_K, ir.Q5_K, ir.Q6_K:
		return 64
	}
	return 32
}

package passes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llama-orch/orc/ir"
)

// GPU describes a CUDA compile target to the decisions tuned for it
// (kernel choice, grid sizes, streaming, residency): the GPU a plan for
// that architecture is tuned for, its SM count and shared memory, and the
// architecture's features.
type GPU struct {
	Arch string // "sm_80", "sm_90"
	// SMs is the streaming multiprocessors of the GPU the plan is tuned
	// for: an A100's 108, an H100's or H200's 132.
	SMs int64
	// SmemPerSM is the shared memory an SM holds, of which each resident
	// block reserves 1 KiB.
	SmemPerSM int64
	// GEMMFill is the CTAs a prefill GEMM of 128-token tiles must still
	// give (GEMMTiles): about one an SM, 128 as measured on an H100.
	GEMMFill int64
	// DecodeAttnBlocks is the blocks a decode attention aims at over long
	// contexts: about two an SM.
	DecodeAttnBlocks int64
	// DecodeAttnCluster is the most blocks of a decode attention's
	// thread-block cluster, which merge their splits through distributed
	// shared memory (sm_90; 1: no clusters, the splits merge through global
	// memory). DecodeAttnStages is the most key tiles each of its warps
	// keeps in flight, and DecodeAttnSmem the most shared memory their ring
	// may take a block (chooseDecodeAttention).
	DecodeAttnCluster, DecodeAttnStages, DecodeAttnSmem int64
	// TokensCluster is the most blocks of an mma_halves kernel's
	// thread-block cluster, which split its rows' super-blocks (sm_90's
	// portable 8; 1: no clusters). GPCSMs is the SMs of the target's
	// smallest GPC, the unit a cluster's blocks share (H100 and H200: 132
	// SMs, GPCs of 16 and 18; 0: no clusters), which bounds the clusters
	// resident at once (GPU.residentClusters).
	TokensCluster, GPCSMs int64
	// PagedAttnStages is the most key tiles the batched step's attention
	// (attend_paged) keeps in flight a block and PagedAttnSmem the most
	// shared memory their ring may take (two stages whatever it says);
	// PagedAttnWaves is the resident grids' worth of blocks a batched
	// decode step's queries fill at the least tiles a split
	// (choosePagedAttention).
	PagedAttnStages, PagedAttnSmem, PagedAttnWaves int64
	// DependentLaunch: the architecture has programmatic dependent launch
	// (griddepcontrol), so a kernel may start while the grid before it
	// finishes, waiting for it in grid_dep_wait.
	DependentLaunch bool
}

// gpus are the CUDA targets the kernels are tuned for.
var gpus = map[string]GPU{
	"sm_80": {Arch: "sm_80", SMs: 108, SmemPerSM: 164 << 10, GEMMFill: 108, DecodeAttnBlocks: 216,
		DecodeAttnCluster: 1, DecodeAttnStages: 4, DecodeAttnSmem: 40 << 10, PagedAttnStages: 4, PagedAttnSmem: 40 << 10, PagedAttnWaves: 1, TokensCluster: 1},
	"sm_90": {Arch: "sm_90", SMs: 132, SmemPerSM: 228 << 10, GEMMFill: 128, DecodeAttnBlocks: 256, DependentLaunch: true,
		DecodeAttnCluster: 8, DecodeAttnStages: 4, DecodeAttnSmem: 40 << 10, PagedAttnStages: 4, PagedAttnSmem: 56 << 10, PagedAttnWaves: 1, TokensCluster: 8, GPCSMs: 16},
}

// GPUTarget is the description of CUDA target arch.
func GPUTarget(arch string) (GPU, error) {
	g, ok := gpus[arch]
	if !ok {
		return GPU{}, fmt.Errorf("unknown CUDA target %q (targets: %s)", arch, strings.Join(GPUArchs(), ", "))
	}
	return g, nil
}

// graphGPU is the description of the CUDA target the pipeline runs g for
// (its target attribute, which Run sets).
func graphGPU(g *ir.Graph) (GPU, error) {
	target, _ := g.Attrs["target"].(string)
	gpu, err := GPUTarget(target)
	if err != nil {
		return GPU{}, fmt.Errorf("graph target: %w", err)
	}
	return gpu, nil
}

// graphGPUTokens is graphGPU and the graph's max_tokens, the tokens a step
// takes, which the GEMM tiles are chosen for.
func graphGPUTokens(g *ir.Graph) (GPU, int64, error) {
	gpu, err := graphGPU(g)
	if err != nil {
		return GPU{}, 0, err
	}
	mt, _ := g.Attrs["max_tokens"].(int64)
	if mt < 1 {
		return GPU{}, 0, fmt.Errorf("graph attr max_tokens missing or not positive")
	}
	return gpu, mt, nil
}

// GPUArchs lists the CUDA targets, sorted.
func GPUArchs() []string {
	var archs []string
	for a := range gpus {
		archs = append(archs, a)
	}
	slices.Sort(archs)
	return archs
}

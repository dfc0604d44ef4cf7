// Package cuda is the CUDA device: it loads a plan into one VRAM arena
// (weights, activations, step state), hands out Sequences with their own KV
// caches, runs the plan's prefill schedule as plain launches and replays the
// decode schedule as a CUDA graph captured once per sequence. The driver is
// reached through runtime/csrc (libcuda via dlopen).
package cuda

import (
	"slices"
	"strings"

	"github.com/llama-orch/orc/plans"
)

// Options tune Open.
type Options struct {
	// Ctx is the context a Sequence may reach; 0 means the model's.
	Ctx int
	// ChunkBytes is the size of each pinned upload buffer; 0 means
	// DefaultChunkBytes.
	ChunkBytes int
	// UploadBuffers is how many pinned buffers the upload keeps in flight
	// (MinUploadBuffers to MaxUploadBuffers); 0 means DefaultUploadBuffers.
	UploadBuffers int
	// Progress, when set, receives upload progress at 0, 25, 50, 75, 100 %.
	Progress func(pct int)
	// SyncEachLaunch runs every step launch by launch, without graphs,
	// synchronising after each so that a faulting kernel is named. Slow;
	// for debugging kernels. The environment variable ORC_CUDA_SYNC=1 sets
	// it too, for any command.
	SyncEachLaunch bool
	// SkipDecode leaves out of the decode schedule every launch whose
	// kernel name starts with one of these prefixes (e.g. attend_decode),
	// so that a benchmark's difference with and without them is what those
	// launches cost inside the decode graph, overlap included (an ablation;
	// scripts/gpu_ablation.sh). The outputs are meaningless then: for
	// timing only. The environment variable ORC_CUDA_SKIP_DECODE
	// (comma-separated prefixes) sets it too, for any command.
	SkipDecode []string
	// ProfileFile, when set, runs steps as SyncEachLaunch does and times
	// each launch by events, writing a table of kernel times by schedule
	// to this file when the device closes (launchProfile). The
	// environment variable ORC_CUDA_PROFILE=FILE sets it too.
	ProfileFile string
}

// skipped is sched without the launches whose kernel name starts with one
// of the prefixes (Options.SkipDecode); sched itself when none does.
func skipped(sched []plans.Launch, prefixes []string) []plans.Launch {
	var kept []plans.Launch
	for i := range sched {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return p != "" && strings.HasPrefix(sched[i].Kernel, p) }) {
			kept = append(kept, sched[i])
		}
	}
	if len(kept) == len(sched) {
		return sched
	}
	return kept
}

// DefaultChunkBytes is the upload chunk size: on the H200 host, 16 MiB
// buffers upload at 30-37 GB/s, 1 MiB ones at 11 (the seed spec's size),
// 64 MiB ones at 23 (TestGPULoadChunkSizes).
const DefaultChunkBytes = 16 << 20

// DefaultUploadBuffers is how many pinned upload buffers are in flight:
// two measured fastest at every chunk size (more only add host copies
// contending for the same memory).
const DefaultUploadBuffers = 2

// MinUploadBuffers and MaxUploadBuffers bound Options.UploadBuffers.
const MinUploadBuffers, MaxUploadBuffers = 2, 64

// align rounds n up to the plan's alignment.
func align(n int64) int64 {
	return (n + plans.Alignment - 1) / plans.Alignment * plans.Alignment
}

// kvBytes is one sequence's KV cache: [n_layer][2][ctx] rows of
// m.KVRowBytes.
func kvBytes(m *plans.Model, ctx int) int64 { return m.KVBytes(ctx) }

// progressMarks reports each 25 % mark that done of total bytes has reached,
// above last and at most upTo; it returns the last mark reported.
func progressMarks(done, total int64, last, upTo int, report func(int)) int {
	for last+25 <= upTo && (total == 0 || done*100 >= int64(last+25)*total) {
		last += 25
		if report != nil {
			report(last)
		}
	}
	return last
}

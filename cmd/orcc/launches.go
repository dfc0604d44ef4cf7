package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llama-orch/orc/plans"
)

// launchTable is a schedule's launches counted by kernel, most launched
// first (then by name), one "  count  kernel" line each: what a step runs,
// without a GPU.
func launchTable(ls []plans.Launch) string {
	counts := map[string]int{}
	for _, l := range ls {
		counts[l.Kernel]++
	}
	kernels := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	var b strings.Builder
	for _, k := range kernels {
		fmt.Fprintf(&b, "%6d  %s\n", counts[k], k)
	}
	return b.String()
}

// launchReport is what --launches prints of a CUDA plan's kernels: the
// decode step's launch table and, where the plan has a batched decode step
// (--slots), its per-token launches (steps of decode tokens alone of up
// to BatchDecodeMaxRows rows) and the per-row launches after them.
func launchReport(k *plans.Kernels) string {
	var b strings.Builder
	fmt.Fprintf(&b, "decode step, %d launches:\n%s", len(k.Decode), launchTable(k.Decode))
	if len(k.BatchDecode) > 0 {
		fmt.Fprintf(&b, "batched decode step of up to %d rows, %d launches over its tokens:\n%s", k.BatchDecodeMaxRows, len(k.BatchDecode), launchTable(k.BatchDecode))
		fmt.Fprintf(&b, "then %d over its rows:\n%s", len(k.BatchRows), launchTable(k.BatchRows))
	}
	return b.String()
}

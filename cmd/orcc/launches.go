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

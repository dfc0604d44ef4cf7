package cpu

import (
	"runtime"
	"sync"
)

// minParallelWork is the estimated work (multiply-adds) below which a loop
// runs on the calling goroutine: starting goroutines costs microseconds,
// more than a tiny preset's whole matmul.
const minParallelWork = 1 << 15

// parallelFor calls body on disjoint [lo, hi) ranges covering [0, n), on up
// to threads goroutines; work is the estimated cost of one item.
func parallelFor(threads, n, work int, body func(lo, hi int)) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if threads == 1 || n < 2 || n*work < minParallelWork {
		body(0, n)
		return
	}
	threads = min(threads, n)
	chunk := (n + threads - 1) / threads
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			body(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	wg.Wait()
}

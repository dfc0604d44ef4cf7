package cuda

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/llama-orch/orc/runtime"
)

// Fault injection, for tests only: the environment variable ORC_FAULT makes
// a GPU opened afterwards fail on purpose, so that tests on the GPU host can
// check that every failure path ends with a clear error, no hang and VRAM
// back at its baseline. Production never sets it; unset, the hooks cost a
// nil check. Faults, separated by commas:
//
//	alloc:N      the N-th allocation (device or pinned host memory) of this
//	             GPU fails as out of memory, as cuMemAlloc would
//	launch:N     the N-th kernel launch call (a batch of launches, or a
//	             decode graph replay) fails before reaching the driver
//	load-kill:P  the process kills itself (SIGKILL) once the weight upload
//	             has reported P percent (0, 25, 50, 75 or 100)
//
// An injected launch failure is not sticky, unlike a real kernel fault,
// which poisons the CUDA context until the process ends.
const faultEnv = "ORC_FAULT"

// faults are the faults of one opened GPU and the counts so far.
type faults struct {
	allocAt, launchAt int64 // 1-based; 0 = never
	killAt            int   // percent; -1 = never
	allocs, launches  atomic.Int64
}

// faultsFromEnv parses ORC_FAULT; nil when it is unset.
func faultsFromEnv() (*faults, error) {
	spec := os.Getenv(faultEnv)
	if spec == "" {
		return nil, nil
	}
	f := &faults{killAt: -1}
	for _, item := range strings.Split(spec, ",") {
		kind, arg, ok := strings.Cut(strings.TrimSpace(item), ":")
		n, err := strconv.ParseInt(arg, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("cuda: %s=%q: %q is not KIND:NUMBER (alloc:N, launch:N, load-kill:PERCENT)", faultEnv, spec, item)
		}
		switch {
		case kind == "alloc" && n >= 1:
			f.allocAt = n
		case kind == "launch" && n >= 1:
			f.launchAt = n
		case kind == "load-kill" && n >= 0 && n <= 100:
			f.killAt = int(n)
		default:
			return nil, fmt.Errorf("cuda: %s=%q: %q names no fault (alloc:N and launch:N with N ≥ 1, load-kill:PERCENT of 0..100)", faultEnv, spec, item)
		}
	}
	return f, nil
}

// alloc counts an allocation of bytes and fails the chosen one.
func (f *faults) alloc(bytes int64) error {
	if f == nil || f.allocAt == 0 {
		return nil
	}
	if n := f.allocs.Add(1); n == f.allocAt {
		return fmt.Errorf("%w: cuda: injected failure of allocation %d (%d bytes) by %s=alloc:%d", runtime.ErrOutOfMemory, n, bytes, faultEnv, f.allocAt)
	}
	return nil
}

// launch counts a launch call and fails the chosen one.
func (f *faults) launch() error {
	if f == nil || f.launchAt == 0 {
		return nil
	}
	if n := f.launches.Add(1); n == f.launchAt {
		return fmt.Errorf("cuda: injected failure of launch call %d by %s=launch:%d", n, faultEnv, f.launchAt)
	}
	return nil
}

// killDuringLoad wraps an upload progress callback: once P percent is
// reported the process dies as an OOM killer or an operator would kill it,
// without running any cleanup.
func (f *faults) killDuringLoad(report func(int)) func(int) {
	if f == nil || f.killAt < 0 {
		return report
	}
	return func(pct int) {
		if report != nil {
			report(pct)
		}
		if pct >= f.killAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // SIGKILL cannot be caught; wait for it to land
		}
	}
}

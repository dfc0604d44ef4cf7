package cuda

import (
	"fmt"

	"github.com/llama-orch/orc/plans"
)

// launchRec mirrors the C struct orc_launch_rec field for field (checked by a
// test against its C size), so a batch crosses into C in one call.
type launchRec struct {
	fn    uint64
	grid  [3]uint32
	block [3]uint32
	smem  uint32
	argc  uint32
}

// batch is a schedule resolved for one step: launches and their argument
// slots, 8 bytes each, concatenated in launch order.
type batch struct {
	launches []launchRec
	argv     []uint64
}

// regions are the device bases and sizes a schedule's arguments point into.
type regions struct {
	weights, arena, state, kv uint64
	weightBytes, arenaBytes   int64
	stateBytes, kvBytes       int64
	ctx                       int64 // the sequence's KV capacity in tokens
	// A batch's paged KV pool and batch region (plans.ArgKVPool,
	// plans.ArgBatch); 0 bytes outside a batched step.
	pool, batch           uint64
	poolBytes, batchBytes int64
}

// CUDA's grid limits: x up to 2^31-1, y and z up to 65535.
var gridMax = [3]int64{1<<31 - 1, 65535, 65535}

// gridDims evaluates ceil((GridA·T + GridB) / GridDiv) per dimension, z
// the splits of a step whose queries see at most keys keys where the
// launch has a split rule (plans.SplitRule.Of; keys 0: its most).
func gridDims(l *plans.Launch, T, keys int64) ([3]uint32, error) {
	var g [3]uint32
	for i := range g {
		n := l.GridA[i]*T + l.GridB[i]
		if d := l.GridDiv[i]; d > 0 {
			n = (n + d - 1) / d
		} else if d < 0 {
			return g, fmt.Errorf("kernel %s: grid_div[%d] is %d", l.Kernel, i, d)
		}
		if i == 2 && l.Splits != nil {
			n = l.Splits.Of(keys)
		}
		if n < 1 || n > gridMax[i] {
			return g, fmt.Errorf("kernel %s: grid dimension %d is %d at T=%d (allowed 1..%d)", l.Kernel, i, n, T, gridMax[i])
		}
		g[i] = uint32(n)
	}
	return g, nil
}

// argValue resolves one argument to its 8-byte slot.
func argValue(a *plans.Arg, r *regions) (uint64, error) {
	inside := func(region string, off, size int64) error {
		if off < 0 || off >= size {
			return fmt.Errorf("%s offset %d outside the %s region of %d bytes", a.Kind, off, region, size)
		}
		return nil
	}
	switch a.Kind {
	case plans.ArgWeight:
		return r.weights + uint64(a.Offset), inside("weight", a.Offset, r.weightBytes)
	case plans.ArgArena:
		return r.arena + uint64(a.Offset), inside("arena", a.Offset, r.arenaBytes)
	case plans.ArgState:
		return r.state + uint64(a.Offset), inside("state", a.Offset, r.stateBytes)
	case plans.ArgKV:
		// Offset is the base at ctx = 1 (plans.ArgKV).
		off := a.Offset * r.ctx
		return r.kv + uint64(off), inside("kv", off, r.kvBytes)
	case plans.ArgKVPool:
		if a.Offset != 0 {
			return 0, fmt.Errorf("kvpool offset %d: the pool's kernels place rows themselves (offset 0)", a.Offset)
		}
		return r.pool, inside("kvpool", 0, r.poolBytes)
	case plans.ArgBatch:
		return r.batch + uint64(a.Offset), inside("batch", a.Offset, r.batchBytes)
	case plans.ArgInt:
		return uint64(a.Value), nil
	}
	return 0, fmt.Errorf("unknown argument kind %q", a.Kind)
}

// resolve turns a schedule into a batch for T tokens whose queries see at
// most keys keys (0: unknown), reusing b's storage.
func resolve(sched []plans.Launch, fns map[string]uint64, T, keys int64, r *regions, b *batch) error {
	b.launches = b.launches[:0]
	b.argv = b.argv[:0]
	for i := range sched {
		l := &sched[i]
		fn, ok := fns[l.Kernel]
		if !ok {
			return fmt.Errorf("launch %d: kernel %s is not in the module", i, l.Kernel)
		}
		grid, err := gridDims(l, T, keys)
		if err != nil {
			return fmt.Errorf("launch %d: %w", i, err)
		}
		rec := launchRec{fn: fn, grid: grid, smem: uint32(l.Smem), argc: uint32(len(l.Args))}
		for j, d := range l.Block {
			rec.block[j] = uint32(d)
		}
		for j := range l.Args {
			v, err := argValue(&l.Args[j], r)
			if err != nil {
				return fmt.Errorf("launch %d (%s) argument %d: %w", i, l.Kernel, j, err)
			}
			b.argv = append(b.argv, v)
		}
		b.launches = append(b.launches, rec)
	}
	return nil
}

// checkSchedule refuses a schedule the runtime cannot run, at load time
// rather than mid-generation: block shapes, argument kinds and the grid at
// the smallest and largest T.
func checkSchedule(name string, sched []plans.Launch, maxT int64) error {
	for i := range sched {
		l := &sched[i]
		threads := 1
		for j, d := range l.Block {
			if d < 1 || d > 1024 {
				return fmt.Errorf("%s launch %d (%s): block dimension %d is %d", name, i, l.Kernel, j, d)
			}
			threads *= d
		}
		if threads > 1024 {
			return fmt.Errorf("%s launch %d (%s): %d threads per block (at most 1024)", name, i, l.Kernel, threads)
		}
		if l.Smem < 0 {
			return fmt.Errorf("%s launch %d (%s): shared memory %d", name, i, l.Kernel, l.Smem)
		}
		if l.Splits != nil {
			if err := l.Splits.Check(); err != nil {
				return fmt.Errorf("%s launch %d (%s): %w", name, i, l.Kernel, err)
			}
		}
		for _, T := range []int64{1, maxT} {
			if _, err := gridDims(l, T, 0); err != nil {
				return fmt.Errorf("%s launch %d: %w", name, i, err)
			}
		}
		for j, a := range l.Args {
			switch a.Kind {
			case plans.ArgWeight, plans.ArgArena, plans.ArgState, plans.ArgKV, plans.ArgKVPool, plans.ArgBatch, plans.ArgInt:
			default:
				return fmt.Errorf("%s launch %d (%s) argument %d: unknown kind %q", name, i, l.Kernel, j, a.Kind)
			}
		}
	}
	return nil
}

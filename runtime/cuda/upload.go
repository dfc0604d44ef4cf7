package cuda

import (
	"errors"
	goruntime "runtime"
	"sync"
)

// upload copies src to dst through nbuf pinned buffers of chunk bytes:
// while the copy engine drains some, the host fills the next from the
// memory map. An event per buffer says when it may be refilled. Progress
// marks 0..75 % are reported as chunks are queued, 100 % once the stream
// has finished.
func (g *gpu) upload(dst devptr, src []byte, chunk, nbuf int, progress func(int)) (err error) {
	bufs := make([][]byte, max(nbuf, 2))
	done := make([]event, len(bufs))
	defer func() {
		for i := range bufs {
			if bufs[i] != nil {
				err = errors.Join(err, g.hostFree(bufs[i]))
			}
			if done[i] != 0 {
				err = errors.Join(err, g.eventDestroy(done[i]))
			}
		}
	}()
	n := min(chunk, max(len(src), 1))
	for i := range bufs {
		if bufs[i], err = g.hostAlloc(n); err != nil {
			return err
		}
		if done[i], err = g.eventCreate(); err != nil {
			return err
		}
	}
	total := int64(len(src))
	last := progressMarks(0, total, -25, 0, progress)
	for off, k := 0, 0; off < len(src); k++ {
		i := k % len(bufs)
		if k >= len(bufs) {
			if err := g.eventWait(done[i]); err != nil {
				return err
			}
		}
		c := fill(bufs[i], src[off:], copyWorkers)
		if err := g.copyHtoD(dst+devptr(off), bufs[i][:c]); err != nil {
			return err
		}
		if err := g.eventRecord(done[i]); err != nil {
			return err
		}
		off += c
		last = progressMarks(int64(off), total, last, 75, progress)
	}
	if err := g.sync(); err != nil {
		return err
	}
	progressMarks(total, total, last, 100, progress)
	return nil
}

// copyWorkers is how many goroutines fill a pinned buffer: one core copies
// from the page cache at about 10 GB/s (measured on the H200 host), well
// under what the copy engine takes.
var copyWorkers = min(goruntime.NumCPU(), 8)

// fill copies src into dst (as copy does) split over workers goroutines,
// in page-aligned parts.
func fill(dst, src []byte, workers int) int {
	n := min(len(dst), len(src))
	if workers <= 1 || n < 256<<10 {
		return copy(dst, src)
	}
	part := ((n+workers-1)/workers + 4095) &^ 4095
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += part {
		hi := min(lo+part, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
	return n
}

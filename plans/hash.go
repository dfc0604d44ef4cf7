package plans

import (
	"encoding/hex"
	"fmt"
	"hash"
	"runtime"
	"sync"

	"lukechampine.com/blake3"
)

// Weight spans are hashed with BLAKE3 (256-bit), not SHA-256 as the other
// files: a load hashes gigabytes beside the upload, and on the H200 host
// SHA-256 of the 12 GB gpt-oss-20b plan took 1.0-1.2 s on all 16 cores,
// longer than the upload itself (0.3-0.5 s).

// chunkHasher hashes a stream as consecutive WeightChunkBytes spans.
type chunkHasher struct {
	h    hash.Hash
	n    int64 // bytes in the current span
	sums []string
}

func newChunkHasher() *chunkHasher { return &chunkHasher{h: blake3.New(32, nil)} }

func (c *chunkHasher) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		take := min(int64(len(p)), WeightChunkBytes-c.n)
		c.h.Write(p[:take])
		c.n += take
		p = p[take:]
		if c.n == WeightChunkBytes {
			c.flush()
		}
	}
	return total, nil
}

func (c *chunkHasher) flush() {
	c.sums = append(c.sums, hex.EncodeToString(c.h.Sum(nil)))
	c.h.Reset()
	c.n = 0
}

// Sums returns the hashes of every span, the last one partial.
func (c *chunkHasher) Sums() []string {
	if c.n > 0 {
		c.flush()
	}
	return c.sums
}

// verifyChunks checks data against per-span hashes on every core and names
// the first span that differs.
func verifyChunks(data []byte, sums []string) error {
	want := (int64(len(data)) + WeightChunkBytes - 1) / WeightChunkBytes
	if int64(len(sums)) != want {
		return fmt.Errorf("%w: %s has %d chunks, manifest lists %d", ErrCorrupt, WeightsFile, want, len(sums))
	}
	bad := make([]bool, len(sums))
	next := make(chan int, len(sums))
	for i := range sums {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(sums)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				end := min(int64(i+1)*WeightChunkBytes, int64(len(data)))
				bad[i] = spanSum(data[int64(i)*WeightChunkBytes:end]) != sums[i]
			}
		}()
	}
	wg.Wait()
	for i, b := range bad {
		if b {
			return fmt.Errorf("%w: %s bytes [%d, %d) fail their hash (altered or truncated)", ErrCorrupt, WeightsFile,
				int64(i)*WeightChunkBytes, min(int64(i+1)*WeightChunkBytes, int64(len(data))))
		}
	}
	return nil
}

// spanSum is a weight span's hash, as chunkHasher writes it.
func spanSum(b []byte) string {
	h := blake3.Sum256(b)
	return hex.EncodeToString(h[:])
}

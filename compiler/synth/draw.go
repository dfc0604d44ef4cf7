package synth

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
)

// chunkBytes is the unit of parallel drawing: each chunk of rows has its own
// random stream (seed, tensor name, chunk index), so output does not depend
// on the number of workers.
const chunkBytes = 1 << 20

// drawTensor writes t's random data to w, drawing chunks in parallel and
// writing them in order; memory stays at one chunk per worker.
func drawTensor(w io.Writer, t *Tensor, seed uint64) error {
	rowBytes := t.Type.RowBytes(int64(t.Dims[0]))
	nRows := t.Bytes() / rowBytes
	chunkRows := max(1, chunkBytes/rowBytes)
	nChunks := (nRows + chunkRows - 1) / chunkRows
	workers := int64(runtime.GOMAXPROCS(0))
	bufs := make([][]byte, workers)
	r := roleOf(t.Name)
	h := nameHash(t.Name)
	for base := int64(0); base < nChunks; base += workers {
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for k := int64(0); k < workers && base+k < nChunks; k++ {
			c := base + k
			rows := min(chunkRows, nRows-c*chunkRows)
			if int64(cap(bufs[k])) < rows*rowBytes {
				bufs[k] = make([]byte, rows*rowBytes)
			}
			bufs[k] = bufs[k][:rows*rowBytes]
			wg.Add(1)
			go func(k int64, buf []byte, c int64) {
				defer wg.Done()
				var key [32]byte
				binary.LittleEndian.PutUint64(key[0:], seed)
				binary.LittleEndian.PutUint64(key[8:], h)
				binary.LittleEndian.PutUint64(key[16:], uint64(c))
				src := rand.NewChaCha8(key)
				errs[k] = fill(t.Type, r, buf, rand.New(src), src)
			}(k, bufs[k], c)
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for k := int64(0); k < workers && base+k < nChunks; k++ {
			if _, err := w.Write(bufs[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

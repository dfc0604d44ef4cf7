package cuda

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestFill(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	src := make([]byte, 3<<20+17)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	for _, c := range []struct{ dst, src, workers int }{
		{1 << 20, len(src), 4}, // a chunk of a longer source
		{len(src), len(src), 3},
		{4 << 20, len(src), 8}, // the source's tail is shorter than the buffer
		{100, len(src), 4},     // below the parallel threshold
		{1 << 20, 5000, 4},
	} {
		dst := make([]byte, c.dst)
		n := fill(dst, src[:c.src], c.workers)
		want := min(c.dst, c.src)
		if n != want || !bytes.Equal(dst[:n], src[:n]) {
			t.Fatalf("%+v: copied %d (want %d), equal %v", c, n, want, bytes.Equal(dst[:n], src[:n]))
		}
		for _, b := range dst[n:] {
			if b != 0 {
				t.Fatalf("%+v: wrote past the source", c)
			}
		}
	}
}

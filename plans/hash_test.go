package plans

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestChunkHashesAcrossSpans(t *testing.T) {
	data := make([]byte, WeightChunkBytes+1000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	h := newChunkHasher()
	for off := 0; off < len(data); off += 999_983 { // writes that straddle the span boundary
		h.Write(data[off:min(off+999_983, len(data))])
	}
	sums := h.Sums()
	if len(sums) != 2 || sums[0] != spanSum(data[:WeightChunkBytes]) || sums[1] != spanSum(data[WeightChunkBytes:]) {
		t.Fatalf("span hashes %v do not match the spans", sums)
	}
	if err := verifyChunks(data, sums); err != nil {
		t.Fatal(err)
	}
	data[WeightChunkBytes+10] ^= 1
	err := verifyChunks(data, sums)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("[%d, %d)", WeightChunkBytes, len(data))) {
		t.Fatalf("altered second span: %v", err)
	}
	if err := verifyChunks(data[:100], sums); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated blob: %v", err)
	}
}

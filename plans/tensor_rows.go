package plans

import "fmt"

// Rows locates rows first .. first+count-1 of t's first dimension: their
// byte offset from the tensor's start and their length. Rows of every
// dtype are whole blocks, so a row range is a contiguous span of GGUF
// order, and of a layout too when it is one of t.Segments (or the whole
// tensor).
func (t *Tensor) Rows(first, count int64) (offset, bytes int64, err error) {
	if len(t.Shape) == 0 || t.Shape[0] < 1 || t.Bytes%t.Shape[0] != 0 {
		return 0, 0, fmt.Errorf("tensor %s %v of %d bytes has no whole rows", t.Name, t.Shape, t.Bytes)
	}
	if first < 0 || count < 1 || first+count > t.Shape[0] {
		return 0, 0, fmt.Errorf("rows [%d, %d) outside tensor %s's %d rows", first, first+count, t.Name, t.Shape[0])
	}
	row := t.Bytes / t.Shape[0]
	if len(t.Segments) > 0 && !isSegment(t.Segments, first, count) {
		return 0, 0, fmt.Errorf("rows [%d, %d) of tensor %s are not one of its layout segments %v", first, first+count, t.Name, t.Segments)
	}
	return first * row, count * row, nil
}

// isSegment reports whether rows [first, first+count) are exactly one of
// the consecutive segments.
func isSegment(segments []int64, first, count int64) bool {
	var start int64
	for _, n := range segments {
		if start == first {
			return n == count
		}
		start += n
	}
	return false
}

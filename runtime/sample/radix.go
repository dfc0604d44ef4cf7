package sample

// radixSort sorts keys ascending, least significant byte first, skipping
// bytes that are equal in every key (most of the index half). It returns the
// sorted slice and the scratch, either of which may be the input's array.
func radixSort(keys, scratch []uint64) (sorted, spare []uint64) {
	if cap(scratch) < len(keys) {
		scratch = make([]uint64, len(keys))
	}
	scratch = scratch[:len(keys)]
	for shift := uint(0); shift < 64; shift += 8 {
		var count [256]int
		for _, k := range keys {
			count[byte(k>>shift)]++
		}
		if len(keys) == 0 || count[byte(keys[0]>>shift)] == len(keys) {
			continue
		}
		pos := 0
		for b, n := range count {
			count[b] = pos
			pos += n
		}
		for _, k := range keys {
			d := byte(k >> shift)
			scratch[count[d]] = k
			count[d]++
		}
		keys, scratch = scratch, keys
	}
	return keys, scratch
}

package tokenizer

import (
	"container/heap"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// byteBPE is byte-level BPE (GPT-2, Qwen2, gpt-oss): text is split by the
// pre-tokenizer, each piece's bytes are mapped to printable characters,
// then adjacent symbols are merged lowest merge rank first.
type byteBPE struct {
	vocab        map[string]int32 // byte-mapped token text -> id
	tokens       []string
	inVocab      []bool             // by id: the token is vocab's entry for its text
	byteID       [256]int32         // id of the one-byte token of each byte; -1 if missing
	merges       map[uint64]mergeTo // (left id, right id) -> merge
	split        func(string, []string) []string
	ignoreMerges bool

	// cache holds ids of pieces already seen: natural text repeats words,
	// so most pieces skip BPE entirely.
	mu    sync.Mutex
	cache map[string][]int32
}

type mergeTo struct {
	rank   int32
	result int32
}

const maxCachedPieces = 1 << 16

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// byteToRune is GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for
// themselves, the others are shifted to U+0100 and up, so every token is
// printable text.
var byteToRune, runeToByte = byteLevelTables()

func byteLevelTables() ([256]rune, map[rune]byte) {
	var b2r [256]rune
	r2b := map[rune]byte{}
	n := rune(0)
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			b2r[b] = rune(b)
		} else {
			b2r[b] = 256 + n
			n++
		}
		r2b[b2r[b]] = byte(b)
	}
	return b2r, r2b
}

func newByteBPE(s *Spec) (*byteBPE, error) {
	b := &byteBPE{vocab: make(map[string]int32, len(s.Tokens)), tokens: s.Tokens, merges: make(map[uint64]mergeTo, len(s.Merges)),
		split: splitters[s.Pre].split, ignoreMerges: s.IgnoreMerges, cache: map[string][]int32{},
		inVocab: make([]bool, len(s.Tokens))}
	for id, t := range s.Tokens {
		// Added tokens are matched before BPE; keeping them out of the BPE
		// vocabulary stops a merge from producing them from plain text.
		if s.TokenTypes[id] == TypeNormal || s.TokenTypes[id] == TypeByte {
			if _, dup := b.vocab[t]; !dup {
				b.vocab[t] = int32(id)
				b.inVocab[id] = true
			}
		}
	}
	for i := range b.byteID {
		id, ok := b.vocab[string(byteToRune[i])]
		if !ok {
			id = -1
		}
		b.byteID[i] = id
	}
	ids, err := b.mergeIDs(s.Merges)
	if err != nil {
		return nil, err
	}
	for rank, m := range ids {
		if _, dup := b.merges[pairKey(m[0], m[1])]; !dup {
			b.merges[pairKey(m[0], m[1])] = mergeTo{int32(rank), m[2]}
		}
	}
	return b, nil
}

// mergeIDs looks up each merge's left, right and result ids in the
// vocabulary, in parallel spans (200,000 merges take about 100 ms on one
// core: three string lookups each); the error names the first bad merge.
func (b *byteBPE) mergeIDs(merges []string) ([][3]int32, error) {
	ids := make([][3]int32, len(merges))
	const span = 16384
	errs := make([]error, (len(merges)+span-1)/span)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var joined []byte // left+right without allocating a string per merge
			for rank := i * span; rank < min((i+1)*span, len(merges)); rank++ {
				m := merges[rank]
				left, right, ok := strings.Cut(m, " ")
				if !ok {
					errs[i] = fmt.Errorf("tokenizer: merge %d %q has no space", rank, m)
					return
				}
				joined = append(append(joined[:0], left...), right...)
				l, lok := b.vocab[left]
				r, rok := b.vocab[right]
				res, resok := b.vocab[string(joined)]
				if !lok || !rok || !resok {
					errs[i] = fmt.Errorf("tokenizer: merge %d %q names a token outside the vocabulary", rank, m)
					return
				}
				ids[rank] = [3]int32{l, r, res}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// pieces returns the bytes every token decodes to.
func (b *byteBPE) pieces() [][]byte {
	out := make([][]byte, len(b.tokens))
	for id, t := range b.tokens {
		if !b.inVocab[id] {
			out[id] = []byte(t) // added tokens are plain text
			continue
		}
		p := make([]byte, 0, len(t))
		for _, r := range t {
			if c, ok := runeToByte[r]; ok {
				p = append(p, c)
			} else {
				p = utf8.AppendRune(p, r)
			}
		}
		out[id] = p
	}
	return out
}

func (b *byteBPE) encodeFragment(text string, _ bool, out []int32) []int32 {
	var pieces []string
	pieces = b.split(text, pieces)
	var w bpeWork
	for _, p := range pieces {
		b.mu.Lock()
		ids, ok := b.cache[p]
		b.mu.Unlock()
		if ok {
			out = append(out, ids...)
			continue
		}
		start := len(out)
		out = b.encodePiece(p, &w, out)
		b.mu.Lock()
		if len(b.cache) >= maxCachedPieces {
			clear(b.cache)
		}
		b.cache[p] = append([]int32(nil), out[start:]...)
		b.mu.Unlock()
	}
	return out
}

// bpeWork is scratch space reused across the pieces of one call.
type bpeWork struct {
	mapped []byte
	ids    []int32
	h      mergeHeap
	next   []int32
	prev   []int32
}

func (b *byteBPE) encodePiece(p string, w *bpeWork, out []int32) []int32 {
	if b.ignoreMerges {
		w.mapped = w.mapped[:0]
		for i := 0; i < len(p); i++ {
			w.mapped = utf8.AppendRune(w.mapped, byteToRune[p[i]])
		}
		if id, ok := b.vocab[string(w.mapped)]; ok {
			return append(out, id)
		}
	}
	w.ids = w.ids[:0]
	for i := 0; i < len(p); i++ {
		if id := b.byteID[p[i]]; id >= 0 {
			w.ids = append(w.ids, id)
		}
	}
	if len(w.ids) <= 32 {
		return append(out, b.mergeScan(w.ids)...)
	}
	return append(out, b.mergeHeap(w)...)
}

// mergeScan merges short pieces by repeatedly finding the lowest-ranked
// adjacent pair (leftmost on ties): quadratic but without allocations.
func (b *byteBPE) mergeScan(ids []int32) []int32 {
	for len(ids) > 1 {
		best, at := mergeTo{rank: -1}, -1
		for i := 0; i+1 < len(ids); i++ {
			if m, ok := b.merges[pairKey(ids[i], ids[i+1])]; ok && (at < 0 || m.rank < best.rank) {
				best, at = m, i
			}
		}
		if at < 0 {
			break
		}
		ids[at] = best.result
		ids = append(ids[:at+1], ids[at+2:]...)
	}
	return ids
}

// mergeHeap is the same merge order for long pieces with a priority queue
// over a linked list of symbols.
func (b *byteBPE) mergeHeap(w *bpeWork) []int32 {
	ids := w.ids
	n := len(ids)
	w.next, w.prev = resize(w.next, n), resize(w.prev, n)
	for i := range n {
		w.next[i], w.prev[i] = int32(i+1), int32(i-1)
	}
	w.next[n-1] = -1
	w.h = w.h[:0]
	push := func(i int32) {
		if i < 0 || w.next[i] < 0 {
			return
		}
		j := w.next[i]
		if m, ok := b.merges[pairKey(ids[i], ids[j])]; ok {
			heap.Push(&w.h, mergeCand{m.rank, i, ids[i], ids[j], m.result})
		}
	}
	for i := range n - 1 {
		push(int32(i))
	}
	for w.h.Len() > 0 {
		c := heap.Pop(&w.h).(mergeCand)
		j := w.next[c.pos]
		if ids[c.pos] != c.left || j < 0 || ids[j] != c.right || ids[c.pos] < 0 {
			continue // stale: a neighbour merged first
		}
		ids[c.pos] = c.result
		ids[j] = -1
		w.next[c.pos] = w.next[j]
		if w.next[j] >= 0 {
			w.prev[w.next[j]] = c.pos
		}
		push(w.prev[c.pos])
		push(c.pos)
	}
	out := ids[:0]
	for i := int32(0); i >= 0; i = w.next[i] {
		out = append(out, ids[i])
	}
	return out
}

func resize(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

type mergeCand struct {
	rank                int32
	pos                 int32
	left, right, result int32
}

type mergeHeap []mergeCand

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	return h[i].rank < h[j].rank || (h[i].rank == h[j].rank && h[i].pos < h[j].pos)
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(mergeCand)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

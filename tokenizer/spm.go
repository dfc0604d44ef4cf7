package tokenizer

import (
	"container/heap"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// sentencePiece is SentencePiece BPE as llama.cpp runs it (Llama-2,
// Phi-3): spaces become ▁, a ▁ is prepended to each text fragment at the
// start or after a special token, characters are merged highest score first,
// and characters with no token fall back to <0xNN> byte tokens.
type sentencePiece struct {
	vocab       map[string]int32
	tokens      []string
	types       []int32
	scores      []float32
	byteID      [256]int32
	unk         int32
	spacePrefix bool

	// crossing are the tokens holding a ▁ after another character. Only
	// they can join text across the start of a word (a ▁ after a non-▁), so
	// everywhere else the text splits into words that merge on their own:
	// words repeat, and their ids are cached.
	crossing []crossingToken
	mu       sync.Mutex
	cache    map[string][]int32
}

// crossingToken is a token and the byte offsets inside it where a word
// starts.
type crossingToken struct {
	text   string
	starts []int
}

const spaceMark = "\u2581" // ▁

func newSentencePiece(s *Spec) (*sentencePiece, error) {
	sp := &sentencePiece{vocab: make(map[string]int32, len(s.Tokens)), tokens: s.Tokens, types: s.TokenTypes, scores: s.Scores, unk: s.UNK, spacePrefix: s.AddSpacePrefix}
	for id, t := range s.Tokens {
		if _, dup := sp.vocab[t]; !dup {
			sp.vocab[t] = int32(id)
		}
	}
	for b := range sp.byteID {
		id, ok := sp.vocab[fmt.Sprintf("<0x%02X>", b)]
		if !ok {
			id = -1
		}
		sp.byteID[b] = id
	}
	sp.cache = map[string][]int32{}
	for _, t := range s.Tokens {
		if starts := wordStarts(t); len(starts) > 0 {
			sp.crossing = append(sp.crossing, crossingToken{t, starts})
		}
	}
	return sp, nil
}

// wordStarts returns the byte offsets in text where a ▁ follows a
// character other than ▁.
func wordStarts(text string) []int {
	var out []int
	for i := 1; i < len(text); {
		j := strings.Index(text[i:], spaceMark)
		if j < 0 {
			break
		}
		if at := i + j; !strings.HasSuffix(text[:at], spaceMark) {
			out = append(out, at)
		}
		i += j + len(spaceMark)
	}
	return out
}

// joined reports whether a crossing token spans the word start at in text,
// so that merges may join the words on either side.
func (sp *sentencePiece) joined(text string, at int) bool {
	for _, c := range sp.crossing {
		for _, k := range c.starts {
			if at >= k && at-k+len(c.text) <= len(text) && text[at-k:at-k+len(c.text)] == c.text {
				return true
			}
		}
	}
	return false
}

// pieces returns the bytes every token decodes to: ▁ is a space, <0xNN> is
// the byte NN, every other token its text.
func (sp *sentencePiece) pieces() [][]byte {
	out := make([][]byte, len(sp.tokens))
	for id, t := range sp.tokens {
		var b byte
		if sp.types[id] == TypeByte && len(t) == 6 {
			if _, err := fmt.Sscanf(t, "<0x%02X>", &b); err == nil {
				out[id] = []byte{b}
				continue
			}
		}
		if sp.types[id] == TypeNormal || sp.types[id] == TypeUserDefined {
			t = strings.ReplaceAll(t, spaceMark, " ")
		}
		out[id] = []byte(t)
	}
	return out
}

// spmSymbol is a run of the text [start, end) in a doubly linked list.
type spmSymbol struct {
	start, end int
	prev, next int
}

type spmBigram struct {
	left, right int
	score       float32
	size        int
}

type spmQueue []spmBigram

func (q spmQueue) Len() int { return len(q) }
func (q spmQueue) Less(i, j int) bool {
	return q[i].score > q[j].score || (q[i].score == q[j].score && q[i].left < q[j].left)
}
func (q spmQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *spmQueue) Push(x any)   { *q = append(*q, x.(spmBigram)) }
func (q *spmQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func (sp *sentencePiece) encodeFragment(text string, afterSpecial bool, out []int32) []int32 {
	if sp.spacePrefix && afterSpecial {
		text = " " + text
	}
	text = strings.ReplaceAll(text, " ", spaceMark)
	word := 0
	for _, at := range wordStarts(text) {
		if !sp.joined(text, at) {
			out = sp.encodeWord(text[word:at], out)
			word = at
		}
	}
	return sp.encodeWord(text[word:], out)
}

// encodeWord appends the ids of one word, from the cache when it was seen.
func (sp *sentencePiece) encodeWord(text string, out []int32) []int32 {
	sp.mu.Lock()
	ids, ok := sp.cache[text]
	sp.mu.Unlock()
	if ok {
		return append(out, ids...)
	}
	start := len(out)
	out = sp.merge(text, out)
	sp.mu.Lock()
	if len(sp.cache) >= maxCachedPieces {
		clear(sp.cache)
	}
	sp.cache[text] = append([]int32(nil), out[start:]...)
	sp.mu.Unlock()
	return out
}

// merge appends the ids of text (spaces already ▁): characters are merged
// into the adjacent pair whose joined token scores highest, leftmost first.
func (sp *sentencePiece) merge(text string, out []int32) []int32 {
	var syms []spmSymbol
	for i, r := range text {
		size := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, size = utf8.DecodeRuneInString(text[i:])
		}
		syms = append(syms, spmSymbol{start: i, end: i + size, prev: len(syms) - 1, next: len(syms) + 1})
	}
	if len(syms) == 0 {
		return out
	}
	syms[len(syms)-1].next = -1
	var q spmQueue
	tryAdd := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		piece := text[syms[l].start:syms[r].end]
		if id, ok := sp.vocab[piece]; ok {
			heap.Push(&q, spmBigram{left: l, right: r, score: sp.scores[id], size: len(piece)})
		}
	}
	for i := 1; i < len(syms); i++ {
		tryAdd(i-1, i)
	}
	for q.Len() > 0 {
		bg := heap.Pop(&q).(spmBigram)
		l, r := &syms[bg.left], &syms[bg.right]
		// Stale when either side already merged into something else.
		if l.end == l.start || r.end == r.start || l.end-l.start+r.end-r.start != bg.size || l.next != bg.right {
			continue
		}
		l.end = r.end
		r.start = r.end // empty marks it merged
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = bg.left
		}
		tryAdd(l.prev, bg.left)
		tryAdd(bg.left, l.next)
	}
	for i := 0; i >= 0; i = syms[i].next {
		piece := text[syms[i].start:syms[i].end]
		if id, ok := sp.vocab[piece]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(piece); j++ {
			if id := sp.byteID[piece[j]]; id >= 0 {
				out = append(out, id)
			} else if sp.unk >= 0 {
				out = append(out, sp.unk)
			}
		}
	}
	return out
}

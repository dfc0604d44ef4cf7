package tokenizer

import (
	"container/heap"
	"fmt"
	"strings"
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
	return sp, nil
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

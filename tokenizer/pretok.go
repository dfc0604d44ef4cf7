package tokenizer

import (
	"strings"
	"unicode"
)

// The pre-tokenizer regexes, matched by hand: Go's regexp has no lookahead
// (\s+(?!\S)) and a hand-written matcher is much faster. Each splitter
// reproduces the leftmost-first alternation and backtracking of the
// regex engines Hugging Face tokenizers (Oniguruma) and llama.cpp use.
const (
	regexGPT2  = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	regexQwen2 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	regexLlama = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	regexGPT4o = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// llama.cpp's default for byte-level BPE: four regexes applied in turn,
	// each splitting the pieces of the one before.
	regexDefault = `[\p{P}\$\+<=>\^~\|]+ ; 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S) ; \p{N}+ ; [0-9][0-9][0-9]`
)

// splitRules parameterises the one matcher that all GPT-style regexes share.
type splitRules struct {
	contractionsFold bool   // (?i:'s|...) rather than case-sensitive
	letterPrefixAny  bool   // [^\r\n\p{L}\p{N}]? before letters rather than " ?"
	caseWords        bool   // gpt-4o's upper/lower letter runs with contraction suffixes
	maxDigits        int    // \p{N}{1,maxDigits}; 0 = \p{N}+
	digitSpace       bool   // " ?" before digits (gpt-2)
	punctTrail       string // characters [...]* after a punctuation run
	newlineRun       bool   // \s*[\r\n]+
}

type splitter struct {
	regex        string
	ignoreMerges bool
	split        func(text string, pieces []string) []string
}

var splitters = map[string]splitter{
	"gpt-2":     {regex: regexGPT2, split: rulesGPT2.split},
	"qwen2":     {regex: regexQwen2, split: rulesQwen2.split},
	"llama-bpe": {regex: regexLlama, ignoreMerges: true, split: rulesLlama.split},
	"gpt-4o":    {regex: regexGPT4o, ignoreMerges: true, split: rulesGPT4o.split},
	"default":   {regex: regexDefault, split: splitDefault},
}

var (
	rulesGPT2  = splitRules{digitSpace: true}
	rulesQwen2 = splitRules{contractionsFold: true, letterPrefixAny: true, maxDigits: 1, punctTrail: "\r\n", newlineRun: true}
	rulesLlama = splitRules{contractionsFold: true, letterPrefixAny: true, maxDigits: 3, punctTrail: "\r\n", newlineRun: true}
	rulesGPT4o = splitRules{contractionsFold: true, letterPrefixAny: true, caseWords: true, maxDigits: 3, punctTrail: "\r\n/", newlineRun: true}
)

// preAliases maps llama.cpp's tokenizer.ggml.pre names to the splitter that
// implements the same regex.
var preAliases = map[string]string{
	"":                 "default",
	"gpt2":             "gpt-2",
	"phi-2":            "gpt-2",
	"llama3":           "llama-bpe",
	"llama-v3":         "llama-bpe",
	"deepseek-r1-qwen": "qwen2",
}

func canonicalPre(name string) (string, bool) {
	if a, ok := preAliases[name]; ok {
		name = a
	}
	_, ok := splitters[name]
	return name, ok
}

// runeText is text decoded once: runes, their classes and byte offsets
// (off has one extra entry, len(text)).
type runeText struct {
	rs  []rune
	cls []uint8
	off []int
}

func (t *runeText) reset(text string) {
	t.rs, t.cls, t.off = t.rs[:0], t.cls[:0], t.off[:0]
	for i, r := range text {
		t.rs = append(t.rs, r)
		t.cls = append(t.cls, runeClass(r))
		t.off = append(t.off, i)
	}
	t.off = append(t.off, len(text))
}

func (t *runeText) is(i int, c uint8) bool { return i < len(t.rs) && t.cls[i]&c != 0 }

// notLNS: [^\s\p{L}\p{N}]
func (t *runeText) notLNS(i int) bool { return i < len(t.rs) && t.cls[i]&(clsL|clsN|clsSpace) == 0 }

// notLNCRLF: [^\r\n\p{L}\p{N}]
func (t *runeText) notLNCRLF(i int) bool { return i < len(t.rs) && t.cls[i]&(clsL|clsN|clsCRLF) == 0 }

func (t *runeText) run(i int, c uint8) int {
	for i < len(t.rs) && t.cls[i]&c != 0 {
		i++
	}
	return i
}

// contraction matches 's|'t|'re|'ve|'m|'ll|'d at i and returns its end, or -1.
func (t *runeText) contraction(i int, fold bool) int {
	if i+1 >= len(t.rs) || t.rs[i] != '\'' {
		return -1
	}
	at := func(j int) rune {
		if j >= len(t.rs) {
			return 0
		}
		r := t.rs[j]
		if fold && r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	switch a := at(i + 1); a {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if at(i+2) == 'e' {
			return i + 3
		}
	case 'l':
		if at(i+2) == 'l' {
			return i + 3
		}
	}
	return -1
}

// caseWord matches gpt-4o's letter alternatives without their optional
// prefix, from j: upperFirst=false is U*W+, true is U+W*, each followed by an
// optional folded contraction. It returns the end or -1.
func (t *runeText) caseWord(j int, upperFirst bool) int {
	k := t.run(j, clsUpper)
	end := -1
	if upperFirst {
		if k > j {
			end = t.run(k, clsLower)
		}
	} else if m := t.run(k, clsLower); m > k {
		end = m
	} else {
		// U* gave back characters until W+ could match one of them: the
		// last "lower" character of the upper run ends the match.
		for p := k - 1; p >= j; p-- {
			if t.cls[p]&clsLower != 0 {
				end = p + 1
				break
			}
		}
	}
	if end < 0 {
		return -1
	}
	if c := t.contraction(end, true); c > 0 {
		return c
	}
	return end
}

// match returns the end of the regex match starting at i (always > i).
func (r *splitRules) match(t *runeText, i int) int {
	n := len(t.rs)
	// Contractions stand alone except in gpt-4o, where they end words.
	if !r.caseWords {
		if e := t.contraction(i, r.contractionsFold); e > 0 {
			return e
		}
	}
	// Letters.
	if r.caseWords {
		for _, upperFirst := range []bool{false, true} {
			if t.notLNCRLF(i) {
				if e := t.caseWord(i+1, upperFirst); e > 0 {
					return e
				}
			}
			if e := t.caseWord(i, upperFirst); e > 0 {
				return e
			}
		}
	} else {
		j := i
		if (r.letterPrefixAny && t.notLNCRLF(j)) || (!r.letterPrefixAny && t.rs[j] == ' ') {
			j++
		}
		if t.is(j, clsL) {
			return t.run(j, clsL)
		}
		if t.is(i, clsL) {
			return t.run(i, clsL)
		}
	}
	// Numbers.
	j := i
	if r.digitSpace && t.rs[j] == ' ' && t.is(j+1, clsN) {
		j++
	}
	if t.is(j, clsN) {
		e := t.run(j, clsN)
		if r.maxDigits > 0 {
			e = min(e, j+r.maxDigits)
		}
		return e
	}
	// Punctuation and symbols.
	j = i
	if t.rs[j] == ' ' && t.notLNS(j+1) {
		j++
	}
	if t.notLNS(j) {
		for j < n && t.notLNS(j) {
			j++
		}
		for j < n && containsRune(r.punctTrail, t.rs[j]) {
			j++
		}
		return j
	}
	// Whitespace.
	k := t.run(i, clsSpace)
	if k == i {
		return i + 1 // unreachable for these regexes; keep the rune isolated
	}
	if r.newlineRun {
		for p := k - 1; p >= i; p-- {
			if t.cls[p]&clsCRLF != 0 {
				return p + 1
			}
		}
	}
	if k == n || k-1 == i {
		return k // \s+(?!\S) at the end of text, or \s+ for a single space
	}
	return k - 1
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}

// split appends the pieces of text to pieces.
func (r *splitRules) split(text string, pieces []string) []string {
	var t runeText
	t.reset(text)
	for i := 0; i < len(t.rs); {
		e := r.match(&t, i)
		pieces = append(pieces, text[t.off[i]:t.off[e]])
		i = e
	}
	return pieces
}

// splitDefault is llama.cpp's LLAMA_VOCAB_PRE_TYPE_DEFAULT: isolate runs of
// [\p{P}$+<=>^~|], split the rest with the GPT-2 regex (its lone \s+ only
// ever matches what would stay an unmatched piece anyway), then isolate
// \p{N}+ runs, then cut [0-9][0-9][0-9] out of them.
func splitDefault(text string, pieces []string) []string {
	var t runeText
	t.reset(text)
	for i := 0; i < len(t.rs); {
		if isDefaultPunct(t.rs[i]) {
			e := i
			for e < len(t.rs) && isDefaultPunct(t.rs[e]) {
				e++
			}
			pieces = appendNumberSplit(&t, text, i, e, pieces)
			i = e
			continue
		}
		e := i
		for e < len(t.rs) && !isDefaultPunct(t.rs[e]) {
			e++
		}
		// The GPT-2 regex sees only this fragment.
		frag := runeText{rs: t.rs[:e], cls: t.cls[:e], off: t.off[:e+1]}
		for j := i; j < e; {
			m := rulesGPT2.match(&frag, j)
			pieces = appendNumberSplit(&t, text, j, m, pieces)
			j = m
		}
		i = e
	}
	return pieces
}

func isDefaultPunct(r rune) bool {
	return unicode.IsPunct(r) || strings.ContainsRune("$+<=>^~|", r)
}

// appendNumberSplit applies the last two default stages to runes [i, e):
// \p{N}+ runs become pieces, and inside them each match of three ASCII
// digits is a piece, the digits between matches another.
func appendNumberSplit(t *runeText, text string, i, e int, pieces []string) []string {
	isDigit := func(k int) bool { return t.rs[k] >= '0' && t.rs[k] <= '9' }
	for i < e {
		j := i
		if t.cls[i]&clsN == 0 {
			for j < e && t.cls[j]&clsN == 0 {
				j++
			}
			pieces = append(pieces, text[t.off[i]:t.off[j]])
			i = j
			continue
		}
		for j < e && t.cls[j]&clsN != 0 {
			j++
		}
		gap := i
		for k := i; k+3 <= j; {
			if isDigit(k) && isDigit(k+1) && isDigit(k+2) {
				if gap < k {
					pieces = append(pieces, text[t.off[gap]:t.off[k]])
				}
				pieces = append(pieces, text[t.off[k]:t.off[k+3]])
				k += 3
				gap = k
				continue
			}
			k++
		}
		if gap < j {
			pieces = append(pieces, text[t.off[gap]:t.off[j]])
		}
		i = j
	}
	return pieces
}

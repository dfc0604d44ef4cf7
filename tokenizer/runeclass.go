package tokenizer

import (
	"sync"
	"unicode"
)

// Rune classes the pre-tokenizer regexes use, as bit flags.
const (
	clsL     uint8 = 1 << iota // \p{L}
	clsN                       // \p{N}
	clsSpace                   // \s (Unicode White_Space)
	clsUpper                   // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (gpt-4o's "upper" side)
	clsLower                   // [\p{Ll}\p{Lm}\p{Lo}\p{M}] (gpt-4o's "lower" side)
	clsCRLF                    // \r or \n
)

// bmpClass caches the classes of the Basic Multilingual Plane: nearly all
// text stays there, and a table lookup is what makes the splitters fast.
var (
	bmpClassOnce sync.Once
	bmpClass     []uint8 // [0x10000]
)

func computeClass(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= clsL
	}
	if unicode.IsNumber(r) {
		c |= clsN
	}
	if unicode.IsSpace(r) {
		c |= clsSpace
	}
	if r == '\r' || r == '\n' {
		c |= clsCRLF
	}
	mark := unicode.IsMark(r)
	modOrOther := unicode.In(r, unicode.Lm, unicode.Lo)
	if mark || modOrOther || unicode.In(r, unicode.Lu, unicode.Lt) {
		c |= clsUpper
	}
	if mark || modOrOther || unicode.Is(unicode.Ll, r) {
		c |= clsLower
	}
	return c
}

func runeClass(r rune) uint8 {
	if r < 0x10000 {
		bmpClassOnce.Do(func() {
			bmpClass = make([]uint8, 0x10000)
			for i := range bmpClass {
				bmpClass[i] = computeClass(rune(i))
			}
		})
		return bmpClass[r]
	}
	return computeClass(r)
}

package filter

import (
	"encoding/binary"
	"unicode/utf8"
)

// FloorCode reports whether r belongs to one of the portable Unicode floor classes every v1
// filter version must strip (tag characters, zero-width characters and U+FEFF, bidirectional
// controls, variation selectors, interlinear annotations) and returns the finding code this
// filter reports for it. It is the filter's own classification (classifyTables), restricted to
// the floor: the extra characters this filter version also strips (NUL, other controls, LRM,
// word joiner, other format characters) are not floor classes and return false, because a
// producer with another filter version need not strip them.
func FloorCode(r rune) (string, bool) {
	switch k := classifyTables(r); k {
	case cTag, cZeroWidth, cBidiControl, cVariationSelector, cInterlinear:
		return codeNames[k], true
	}
	return "", false
}

// IndexFloor returns the byte offset of the first rune of b in a floor class (FloorCode) and
// its code, or -1 and "" when there is none. Invalid UTF-8 is skipped a byte at a time: it is
// no floor rune (its verdict belongs to a UTF-8 check). The scan is one forward pass that
// steps over ASCII eight bytes at a time and decodes only runes whose leading byte can start
// a floor rune (0xE2, 0xEF, 0xF3: TestIndexFloorLeadBytes), so a consumer can run it over
// every body and log it reads at about the cost of a UTF-8 validation.
func IndexFloor(b []byte) (int, string) {
	for i := 0; i < len(b); {
		if i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8
			continue
		}
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		if c != 0xE2 && c != 0xEF && c != 0xF3 {
			i++ // a continuation byte or another lead byte: never part of a floor rune's start
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if code, ok := FloorCode(r); ok && n > 1 {
			return i, code
		}
		i += n
	}
	return -1, ""
}

// IndexStripped returns the byte offset of the first rune of b that this filter version's
// Unicode safety step removes, and its finding code; -1 and "" when there is none. That is
// the floor classes (FloorCode) and the extras this version strips as well: NUL, the other C0
// controls but TAB, LF and CR, DEL, C1 controls, terminal escapes, LRM/RLM/ALM, the word
// joiner and every other format (Cf) character — the same classification the pipeline uses
// (asciiNeedsWork, classifyRune). A CR (line endings are normalised, not stripped) and invalid
// UTF-8 (replaced) are not reported. The output of this filter version never holds such a
// rune, so a text that does was not produced by it.
func IndexStripped(b []byte) (int, string) {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if i+8 <= len(b) && plainASCII8(binary.LittleEndian.Uint64(b[i:])) {
				i += 8
				continue
			}
			if asciiNeedsWork[c] && c != '\r' {
				switch c {
				case 0:
					return i, codeNames[cNUL]
				case 0x1b:
					return i, codeNames[cTerminalEscape]
				}
				return i, codeNames[cControl]
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if n > 1 {
			if k := classifyRune(r); k != 0xff {
				return i, codeNames[k]
			}
		}
		i += n
	}
	return -1, ""
}

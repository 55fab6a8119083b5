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

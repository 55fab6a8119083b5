package filterv13

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// asciiNeedsWork marks the ASCII bytes the decode/safety pass must look at: CR (line-ending
// normalisation), C0 controls other than TAB and LF, and DEL. Everything else ASCII is copied
// as is.
var asciiNeedsWork = func() (t [utf8.RuneSelf]bool) {
	for b := 0; b < 0x20; b++ {
		t[b] = b != '\t' && b != '\n' // CR included: it becomes LF
	}
	t[0x7f] = true
	return t
}()

// classifyRune returns the finding code of a non-ASCII rune the floor or the shipped extras
// strip, or 0xff when the rune stays.
func classifyRune(r rune) code {
	switch {
	case r >= 0xE0000 && r <= 0xE007F:
		return cTag
	case r >= 0x200B && r <= 0x200D, r == 0xFEFF:
		return cZeroWidth
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return cBidiControl
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return cVariationSelector
	case r >= 0xFFF9 && r <= 0xFFFB:
		return cInterlinear
	case r == 0x200E || r == 0x200F || r == 0x061C:
		return cBidiMark
	case r == 0x2060:
		return cWordJoiner
	case r >= 0x80 && r <= 0x9F:
		return cControl
	case unicode.Is(unicode.Cf, r):
		return cFormat
	}
	return 0xff
}

// stripUnsafe is pipeline step 1 in one pass: it decodes UTF-8 (each byte that does not
// start a valid sequence becomes U+FFFD and is counted), normalises line endings (CRLF and a
// lone CR become LF), and removes the floor code points, the shipped extras (NUL, other C0/C1 controls
// except TAB and LF, terminal escape sequences, LRM/RLM/ALM, word joiner, every other Cf
// character) and counts each removal. Terminal escapes are parsed in one forward pass, so an
// unterminated sequence costs linear time: an unterminated OSC/DCS/APC/PM/SOS string ends at
// the next LF (kept) or at the end of the text. It returns b itself when nothing changes.
func stripUnsafe(b []byte, c *counts) []byte {
	var out []byte // nil until the first change
	last := 0      // b[last:i] is pending copy into out
	for i := 0; i < len(b); {
		ch := b[i]
		if ch < utf8.RuneSelf {
			if !asciiNeedsWork[ch] {
				i++
				continue
			}
			if out == nil {
				out = make([]byte, 0, headroom(len(b)))
			}
			out = append(out, b[last:i]...)
			switch ch {
			case '\r':
				out = append(out, '\n')
				i++
				if i < len(b) && b[i] == '\n' {
					i++
				}
			case 0:
				c[cNUL]++
				i++
			case 0x1b:
				c[cTerminalEscape]++
				i = skipEscape(b, i+1)
			case 0x0b, 0x0c: // VT and FF are vertical whitespace: LF, so words stay apart
				c[cControl]++
				out = append(out, '\n')
				i++
			default:
				c[cControl]++
				i++
			}
			last = i
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			if out == nil {
				out = make([]byte, 0, headroom(len(b)+len(b)/8))
			}
			out = append(out, b[last:i]...)
			out = append(out, "\uFFFD"...)
			c[cInvalidUTF8]++
			i++
			last = i
			continue
		}
		k := classifyRune(r)
		if k == 0xff {
			i += n
			continue
		}
		if out == nil {
			out = make([]byte, 0, headroom(len(b)))
		}
		out = append(out, b[last:i]...)
		i += n
		switch r {
		case 0x9B: // C1 CSI
			c[cTerminalEscape]++
			i = skipCSI(b, i)
		case 0x9D, 0x90, 0x9F, 0x9E, 0x98: // C1 OSC, DCS, APC, PM, SOS
			c[cTerminalEscape]++
			i = skipString(b, i)
		case 0x85: // NEL is a line break: it becomes LF rather than gluing two words together
			c[k]++
			out = append(out, '\n')
		default:
			c[k]++
		}
		last = i
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// headroom is the capacity of a copy of n bytes: a little spare room lets redaction rewrite
// the copy in place even where a replacement is longer than the secret it replaces.
func headroom(n int) int { return n + n/64 + 64 }

// skipEscape returns the index just past the escape sequence whose ESC was at i-1.
func skipEscape(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch ch := b[i]; {
	case ch == '[':
		return skipCSI(b, i+1)
	case ch == ']' || ch == 'P' || ch == '_' || ch == '^' || ch == 'X':
		return skipString(b, i+1)
	case ch >= 0x20 && ch <= 0x2F: // intermediates, then one final byte
		for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2F {
			i++
		}
		if i < len(b) && b[i] >= 0x30 && b[i] <= 0x7E {
			i++
		}
		return i
	case ch >= 0x30 && ch <= 0x7E:
		return i + 1
	}
	return i // lone ESC: only the ESC goes
}

// skipCSI skips CSI parameter bytes, intermediates and the final byte; a malformed sequence
// ends before the first byte outside those ranges.
func skipCSI(b []byte, i int) int {
	for i < len(b) && b[i] >= 0x30 && b[i] <= 0x3F {
		i++
	}
	for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2F {
		i++
	}
	if i < len(b) && b[i] >= 0x40 && b[i] <= 0x7E {
		i++
	}
	return i
}

// skipString skips an OSC/DCS/APC/PM/SOS payload up to and including its terminator (BEL,
// ESC \ or C1 ST); unterminated, it stops before the next line ending or at the end.
func skipString(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case 0x07:
			return i + 1
		case '\n', '\r':
			return i
		case 0x1b:
			if i+1 < len(b) && b[i+1] == '\\' {
				return i + 2
			}
			return i // an ESC aborts the string and starts a sequence of its own
		case 0xC2:
			if i+1 < len(b) && b[i+1] == 0x9C {
				return i + 2
			}
		}
		i++
	}
	return i
}

// nfkc applies NFKC, counting each normalisation segment it changed. Pure ASCII and text that
// is already NFKC are returned as is after one quick check.
func nfkc(b []byte, c *counts) []byte {
	q := norm.NFKC.QuickSpan(b)
	if q == len(b) {
		return b
	}
	out := make([]byte, q, len(b)+len(b)/16)
	copy(out, b[:q])
	rest := b[q:]
	for len(rest) > 0 {
		n := norm.NFKC.NextBoundary(rest, true)
		if n <= 0 {
			n = len(rest)
		}
		seg := rest[:n]
		before := len(out)
		out = norm.NFKC.Append(out, seg...)
		if !bytes.Equal(out[before:], seg) {
			c[cNFKC]++
		}
		rest = rest[n:]
	}
	return out
}

// unicodeSafety is pipeline step 1b. Stripping runs before NFKC (so a compatibility form
// cannot hide behind an invisible character) and again after it until the text is stable, so
// the result is a fixed point: filtering it again changes nothing.
func unicodeSafety(b []byte, c *counts) []byte {
	b = stripUnsafe(b, c)
	for range 4 {
		n := nfkc(b, c)
		if len(n) == len(b) && (len(n) == 0 || &n[0] == &b[0]) {
			return b
		}
		s := stripUnsafe(n, c)
		if len(s) == len(n) {
			return s
		}
		b = s
	}
	return b
}

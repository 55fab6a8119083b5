package filter

import (
	"bytes"
	"encoding/binary"
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
	if r >= 0x2070 && r < 0xFE00 || r >= 0xFF00 && r < 0xFFF9 || r >= 0x300 && r < 0x600 || r < 0xAD && r > 0x9F {
		return 0xff // no floor range, no C1 control and no Cf character lies here (tested)
	}
	return classifyTables(r)
}

// classifyTables is classifyRune for a rune outside its table-free ranges.
func classifyTables(r rune) code {
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
// the next LF (kept) or at the end of the text. It returns b itself when nothing changes;
// otherwise the result is built in *buf (grown as needed and stored back), or in a fresh
// slice when buf is nil.
func stripUnsafe(b []byte, c *counts, buf *[]byte) []byte {
	var out []byte // nil until the first change
	last := 0      // b[last:i] is pending copy into out
	for i := 0; i < len(b); {
		ch := b[i]
		if ch < utf8.RuneSelf {
			if i+8 <= len(b) && plainASCII8(binary.LittleEndian.Uint64(b[i:])) {
				i += 8 // eight printable ASCII bytes: nothing to do
				continue
			}
			if !asciiNeedsWork[ch] {
				i++
				continue
			}
			if out == nil {
				out = newBuf(buf, headroom(len(b)))
			}
			out = append(out, b[last:i]...)
			i, out = stripASCII(b, i, out, c)
			last = i
			continue
		}
		if ch >= 0xE3 && ch <= 0xEE && i+2 < len(b) && b[i+1]&0xC0 == 0x80 && b[i+2]&0xC0 == 0x80 && (ch != 0xED || b[i+1] < 0xA0) {
			// a well-formed rune U+3000-U+EFFF (CJK, kana, Hangul, Yi, private use): inside
			// classifyRune's table-free range, nothing to strip
			i += 3
			continue
		}
		r, n := decodeRune(b, i)
		if r == utf8.RuneError && n == 1 {
			if out == nil {
				out = newBuf(buf, headroom(len(b)+len(b)/8))
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
			out = newBuf(buf, headroom(len(b)))
		}
		out = append(out, b[last:i]...)
		i, out = stripRune(b, i+n, r, k, out, c)
		last = i
	}
	if out == nil {
		return b
	}
	out = append(out, b[last:]...)
	keepBuf(buf, out)
	return out
}

// plainASCII8 reports whether the eight bytes of x are all printable ASCII (0x20-0x7E): no
// control byte (some byte < 0x20: the borrow test is exact for "any"), no DEL and no byte with
// the high bit (some byte + 1 has the high bit set; a carry out of 0xFF only adds a false
// "no", never a false "yes").
func plainASCII8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return ((x-0x20*ones)&^x|(x+ones)|x)&highs == 0
}

// simpleRune returns the size of the rune at b[i] when it is a simple starter, else 0: ASCII,
// or a CJK ideograph (U+3400-U+9FFF), a hiragana or katakana letter (U+3041-U+3096,
// U+30A1-U+30FA) or a Hangul syllable (U+AC00-U+D7A3). Each is NFKC already, a starter
// (combining class 0, as is the first rune of its decomposition) with a boundary before it
// (nothing composes with a rune before it): NFKC's quick check restarts its state at each, as
// at an ASCII byte (tested for every rune of these ranges). b is valid UTF-8.
func simpleRune(b []byte, i int) int {
	c := b[i]
	if c < utf8.RuneSelf {
		return 1
	}
	if c < 0xE3 || c > 0xED || i+2 >= len(b) {
		return 0
	}
	r := rune(c&0x0F)<<12 | rune(b[i+1]&0x3F)<<6 | rune(b[i+2]&0x3F)
	if r >= 0x3400 && r <= 0x9FFF || r >= 0x3041 && r <= 0x3096 || r >= 0x30A1 && r <= 0x30FA || r >= 0xAC00 && r <= 0xD7A3 {
		return 3
	}
	return 0
}

// simplePrefix returns where the run of simple runes (simpleRune) starting at pos ends, and
// where the last of them starts (-1 when there is none); ASCII goes eight bytes at a time.
func simplePrefix(b []byte, pos int) (end, last int) {
	i, last := pos, -1
	for i < len(b) {
		if i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8
			last = i - 1
			continue
		}
		n := simpleRune(b, i)
		if n == 0 {
			break
		}
		last = i
		i += n
	}
	return i, last
}

// asciiPrefix returns the length of the longest all-ASCII prefix of b.
func asciiPrefix(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for i < len(b) && b[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// quickSpan is norm.NFKC.QuickSpan(b) with the simple runes skipped (ASCII eight bytes at a
// time): every simple rune is a segment of its own and QuickSpan restarts its state at each
// one, so the quick check runs only over each short stretch of other runes, together with
// the simple rune before it (a mark may compose with that rune), and ends where the next
// simple rune starts, where a boundary always is. A stretch longer than quickStretch bytes
// goes to QuickSpan with everything after it, as a whole: the look-ahead for the stretch's
// end stays bounded, so a call costs what QuickSpan's own does. The result is QuickSpan's.
func quickSpan(b []byte) int {
	for pos := 0; pos < len(b); {
		k, last := simplePrefix(b, pos)
		if k == len(b) {
			return k
		}
		s := pos
		if last >= 0 {
			s = last
		}
		e := k + 1
		for e < len(b) && e-k < quickStretch && (b[e]&0xC0 == 0x80 || simpleRune(b, e) == 0) {
			e++
		}
		if e-k >= quickStretch {
			return s + norm.NFKC.QuickSpan(b[s:])
		}
		if q := norm.NFKC.QuickSpan(b[s:e]); q < e-s {
			return s + q
		}
		pos = e
	}
	return len(b)
}

// quickStretch bounds the non-ASCII stretch quickSpan checks on its own.
const quickStretch = 64

// decodeRune is utf8.DecodeRune(b[i:]) for a non-ASCII b[i], with the two- and three-byte
// sequences that cannot be overlong or a surrogate (lead C2-DF, E1-EC, EE-EF, continuation
// bytes 80-BF) decoded inline.
func decodeRune(b []byte, i int) (rune, int) {
	c := b[i]
	switch {
	case c >= 0xC2 && c <= 0xDF && i+1 < len(b) && b[i+1]&0xC0 == 0x80:
		return rune(c&0x1F)<<6 | rune(b[i+1]&0x3F), 2
	case c >= 0xE1 && c <= 0xEF && c != 0xED && i+2 < len(b) && b[i+1]&0xC0 == 0x80 && b[i+2]&0xC0 == 0x80:
		return rune(c&0x0F)<<12 | rune(b[i+1]&0x3F)<<6 | rune(b[i+2]&0x3F), 3
	}
	return utf8.DecodeRune(b[i:])
}

// stripASCII handles the ASCII byte at i that needs work (asciiNeedsWork): it appends what
// replaces it to out, counts it, and returns where the text goes on.
func stripASCII(b []byte, i int, out []byte, c *counts) (int, []byte) {
	switch b[i] {
	case '\r':
		out = append(out, '\n')
		i++
		if i < len(b) && b[i] == '\n' {
			i++
		}
		return i, out
	case 0:
		c[cNUL]++
	case 0x1b:
		c[cTerminalEscape]++
		return skipEscape(b, i+1), out
	case 0x0b, 0x0c: // VT and FF are vertical whitespace: LF, so words stay apart
		c[cControl]++
		out = append(out, '\n')
	default:
		c[cControl]++
	}
	return i + 1, out
}

// stripRune handles the stripped rune r (code k) that ended at i: C1 escape introducers skip
// their sequence, NEL becomes LF, everything else is removed; each is counted.
func stripRune(b []byte, i int, r rune, k code, out []byte, c *counts) (int, []byte) {
	switch r {
	case 0x9B: // C1 CSI
		c[cTerminalEscape]++
		return skipCSI(b, i), out
	case 0x9D, 0x90, 0x9F, 0x9E, 0x98: // C1 OSC, DCS, APC, PM, SOS
		c[cTerminalEscape]++
		return skipString(b, i), out
	case 0x85: // NEL is a line break: it becomes LF rather than gluing two words together
		out = append(out, '\n')
	}
	c[k]++
	return i, out
}

// newBuf returns an empty slice with at least n bytes of capacity: *buf's when buf is not nil
// and it is large enough (else a new one), a fresh one when buf is nil.
func newBuf(buf *[]byte, n int) []byte {
	if buf != nil && cap(*buf) >= n {
		return (*buf)[:0]
	}
	return make([]byte, 0, n)
}

// keepBuf stores out (which may have grown) back as *buf for the next chunk.
func keepBuf(buf *[]byte, out []byte) {
	if buf != nil {
		*buf = out[:0]
	}
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
//
// Only the segments that need work go through norm.Form.Append (one call, and one allocation,
// per segment): every run that is already NFKC is copied in one piece. A run is only started
// at a rune that is a true boundary (combining class 0, nothing composes with what precedes
// it), so the bytes and the per-segment counts are exactly those of normalising segment by
// segment; in particular a run of more than 30 combining marks, where NFKC inserts U+034F,
// is never restarted in the middle. v1.3 normalised every segment after the first non-NFKC
// one, so a single full-width character early in a text made the rest ~250x slower.
func nfkc(b []byte, c *counts, buf *[]byte) (out []byte, dirty bool) {
	q := quickSpan(b)
	if q == len(b) {
		return b, false
	}
	out = append(newBuf(buf, headroom(len(b))), b[:q]...)
	out, dirty = nfkcRest(out, b[q:], c)
	keepBuf(buf, out)
	return out, dirty
}

// nfkcRest appends the NFKC form of rest to out (out is NFKC and ends at a boundary). dirty
// reports that a normalised segment holds a character stripUnsafe removes or replaces, so the
// strip pass must run again; the bytes copied unchanged were stripped already.
//
// A full-width ASCII character or an ideographic space alone in its segment (the next rune
// is a true boundary) becomes its ASCII byte directly. Any other segment that starts at a
// true boundary normalises on its own and goes through one norm.Iter reused for the whole
// text; norm.Form.Append allocates its working buffer on every call (about 30 bytes of
// garbage per input byte on text that is not NFKC anywhere), so it is kept for the rare
// segment that has to merge with the tail of out (after a run of more than 30 combining
// marks).
func nfkcRest(out, rest []byte, c *counts) (_ []byte, dirty bool) {
	var it norm.Iter
	for len(rest) > 0 {
		if a, sz := wideASCII(rest); sz > 0 && (len(rest) == sz || quickStart(rest[sz:])) {
			out = append(out, a)
			c[cNFKC]++
			rest = rest[sz:]
		} else if m := compatForm(rest); m != "" && (len(rest) == 3 || quickStart(rest[3:])) {
			out = append(out, m...)
			c[cNFKC]++
			rest = rest[3:]
		} else if m := voicedKana(rest); m != "" && (len(rest) == 6 || quickStart(rest[6:])) {
			out = append(out, m...)
			c[cNFKC]++
			rest = rest[6:]
		} else {
			n := norm.NFKC.NextBoundary(rest, true)
			if n <= 0 {
				n = len(rest)
			}
			seg := rest[:n]
			before := len(out)
			if quickStart(seg) {
				it.Init(norm.NFKC, seg)
				for !it.Done() {
					out = append(out, it.Next()...)
				}
			} else {
				out = norm.NFKC.Append(out, seg...)
				dirty = true // it may have rewritten the tail of out as well: strip again
			}
			if !bytes.Equal(out[before:], seg) {
				c[cNFKC]++
				dirty = dirty || needsStrip(out[before:])
			}
			rest = rest[n:]
		}
		// a quick-check run may start here; not before a compatibility character of the
		// tables, which NFKC changes (the run would be empty)
		if len(rest) > 0 && quickStart(rest) && !compatChanged(rest) {
			q := quickSpan(rest)
			out = append(out, rest[:q]...)
			rest = rest[q:]
		}
	}
	return out, dirty
}

// compatRanges are the blocks of compatibility characters a hostile text is made of
// (half-width katakana and Hangul, full-width forms, enclosed alphanumerics, CJK symbols):
// compatTable holds, per rune of them, its NFKC form when it changes, the rune is a starter
// with a boundary before it (by its NFKC properties), and the form holds nothing stripUnsafe
// would remove (none in these blocks does; one that did would take the general path, which
// strips again).
var (
	compatRanges = [...][2]rune{{0xFF00, 0xFFF0}, {0x2460, 0x2500}, {0x3000, 0x3100}}
	compatTable  [len(compatRanges)][]string
)

func init() {
	for k, rg := range compatRanges {
		compatTable[k] = make([]string, rg[1]-rg[0])
		for r := rg[0]; r < rg[1]; r++ {
			b := utf8.AppendRune(nil, r)
			if f := norm.NFKC.String(string(b)); f != string(b) && quickStartProps(b) && !needsStrip([]byte(f)) {
				compatTable[k][r-rg[0]] = f
			}
		}
	}
}

// voicedTable holds the NFKC form of a half-width katakana letter (U+FF66-U+FF9D) followed by
// a half-width voiced or semi-voiced sound mark (U+FF9E, U+FF9F): the pair NFKC composes
// ("ﾊﾟ" becomes "パ") or, where no composed letter exists, maps to the full-width letter
// and the combining mark.
var voicedTable = func() (t [0xFF9E - 0xFF66][2]string) {
	for r := rune(0xFF66); r < 0xFF9E; r++ {
		for m := rune(0xFF9E); m <= 0xFF9F; m++ {
			t[r-0xFF66][m-0xFF9E] = norm.NFKC.String(string([]rune{r, m}))
		}
	}
	return t
}()

// voicedKana returns the NFKC form of the half-width katakana letter and sound mark at b[0:6]
// from voicedTable, or "" when b does not start with such a pair. A caller uses it only when
// the pair is a segment of its own (the rune after it is a true boundary).
func voicedKana(b []byte) string {
	if len(b) < 6 || b[0] != 0xEF || b[3] != 0xEF || b[4] != 0xBE || b[5] < 0x9E || b[5] > 0x9F {
		return ""
	}
	r := rune(b[0]&0x0F)<<12 | rune(b[1]&0x3F)<<6 | rune(b[2]&0x3F)
	if r < 0xFF66 || r >= 0xFF9E {
		return ""
	}
	return voicedTable[r-0xFF66][b[5]-0x9E]
}

// compatChanged reports a rune at b[0] that wideASCII or compatTable maps: NFKC changes it
// and it is a starter with a boundary before it (tested).
func compatChanged(b []byte) bool {
	if _, sz := wideASCII(b); sz > 0 {
		return true
	}
	return compatForm(b) != ""
}

// compatForm returns the NFKC form of the rune at b[0] (a three-byte one) from compatTable
// when it has one there; "" otherwise. A caller uses it only when the rune is alone in its
// segment.
func compatForm(b []byte) string {
	if len(b) < 3 || b[0]&0xF0 != 0xE0 {
		return ""
	}
	r := rune(b[0]&0x0F)<<12 | rune(b[1]&0x3F)<<6 | rune(b[2]&0x3F)
	for k, rg := range compatRanges {
		if r >= rg[0] && r < rg[1] {
			return compatTable[k][r-rg[0]]
		}
	}
	return ""
}

// wideASCII returns the ASCII byte NFKC maps the rune at b[0] to when it is a full-width form
// U+FF01–U+FF5E or the ideographic space U+3000, and the rune's size; size 0 otherwise.
func wideASCII(b []byte) (byte, int) {
	if len(b) < 3 {
		return 0, 0
	}
	switch {
	case b[0] == 0xEF && b[1] == 0xBC && b[2] >= 0x81 && b[2] <= 0xBF: // U+FF01–U+FF3F
		return b[2] - 0x81 + 0x21, 3
	case b[0] == 0xEF && b[1] == 0xBD && b[2] >= 0x80 && b[2] <= 0x9E: // U+FF40–U+FF5E
		return b[2] - 0x80 + 0x60, 3
	case b[0] == 0xE3 && b[1] == 0x80 && b[2] == 0x80: // U+3000
		return ' ', 3
	}
	return 0, 0
}

// needsStrip reports whether b holds a byte or rune stripUnsafe would remove or replace.
func needsStrip(b []byte) bool {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			if asciiNeedsWork[b[i]] {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || classifyRune(r) != 0xff {
			return true
		}
		i += n
	}
	return false
}

// quickStart reports whether a quick-check run may start at rest[0]: an ASCII byte, or a rune
// with combining class 0 that has a boundary before it. After a segment that ended inside a
// long run of combining marks (NFKC's stream-safe limit) the next rune is a non-starter, and
// the run must go on being normalised segment by segment.
func quickStart(rest []byte) bool {
	if simpleRune(rest, 0) != 0 {
		return true // ASCII, CJK, kana, Hangul: starters with a boundary before them (tested)
	}
	// a combining diacritical mark U+0300-U+036F (CC 80-CD AF) is a non-starter, except the
	// grapheme joiner U+034F (tested)
	if len(rest) >= 2 && (rest[0] == 0xCC && rest[1] >= 0x80 || rest[0] == 0xCD && rest[1] < 0xB0) && !(rest[0] == 0xCD && rest[1] == 0x8F) {
		return false
	}
	if compatChanged(rest) {
		return true // the tables hold only starters with a boundary before them
	}
	return quickStartProps(rest)
}

// quickStartProps is quickStart by the rune's NFKC properties.
func quickStartProps(rest []byte) bool {
	p := norm.NFKC.Properties(rest)
	return p.BoundaryBefore() && p.CCC() == 0 && p.LeadCCC() == 0
}

// unicodeSafety is pipeline step 1b. Stripping runs before NFKC (so a compatibility form
// cannot hide behind an invisible character) and again after it until the text is stable, so
// the result is a fixed point: filtering it again changes nothing.
//
// A long text is processed in chunks of about safetyChunk bytes that end before a line feed
// (never between CR and LF): no escape sequence, UTF-8 sequence or NFKC segment crosses such a
// point, so each chunk normalises exactly as it would inside the whole text, and the result
// is written into one output buffer. Peak memory is the input, one output of about its size
// and a few chunk-sized scratch copies, instead of one full copy per step. The input itself
// is returned when nothing changes. The chunks' scratch buffers are reused from chunk to
// chunk, so the garbage stays a few chunks' size too.
func unicodeSafety(b []byte, c *counts) []byte {
	if len(b) <= safetyChunk {
		return unicodeSafetyChunk(b, c, nil)
	}
	var out []byte // nil while every chunk so far came back unchanged
	var sc [2][]byte
	for start := 0; start < len(b); {
		end := chunkEnd(b, start)
		piece := unicodeSafetyChunk(b[start:end], c, &sc)
		same := len(piece) == end-start && &piece[0] == &b[start]
		if out == nil && !same {
			out = make([]byte, start, headroom(len(b)))
			copy(out, b[:start])
		}
		if out != nil {
			out = append(out, piece...)
		}
		start = end
	}
	if out == nil {
		return b
	}
	return out
}

// safetyChunk is the chunk size of unicodeSafety (a chunk runs on to the next line feed).
const safetyChunk = 256 << 10

// chunkEnd returns where the chunk starting at start ends: at the first LF at least
// safetyChunk bytes on that does not follow a CR, or at the end of the text.
func chunkEnd(b []byte, start int) int {
	for e := start + safetyChunk; e < len(b); {
		k := bytes.IndexByte(b[e:], '\n')
		if k < 0 {
			break
		}
		if p := e + k; b[p-1] != '\r' {
			return p
		}
		e += k + 1
	}
	return len(b)
}

// unicodeSafetyChunk is unicodeSafety on one chunk (or a whole short text). With sc, the
// steps write into its two buffers in turn (a step's input is never its output buffer) and
// the result lives in one of them until the next call; with nil, each step that changes
// something allocates its result.
func unicodeSafetyChunk(b []byte, c *counts, sc *[2][]byte) []byte {
	buf := func(k int) *[]byte {
		if sc == nil {
			return nil
		}
		return &sc[k]
	}
	b = stripUnsafe(b, c, buf(0)) // b is the chunk itself or sc[0]
	for range 4 {
		n, dirty := nfkc(b, c, buf(1)) // b or sc[1]
		if len(n) == len(b) && (len(n) == 0 || &n[0] == &b[0]) {
			return b
		}
		if !dirty {
			return n // stripping it again would change nothing
		}
		s := stripUnsafe(n, c, buf(0)) // n is in sc[1]: sc[0] (b) is free again
		if len(s) == len(n) {
			return s
		}
		b = s
	}
	return b
}

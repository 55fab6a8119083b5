package reviewpub

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// canonical maps a value to the text the forbidden-context comparison counts characters in:
// HTML entities decoded (repeatedly, for double encoding), NFKC (full-width and compatibility
// forms, mathematical and circled digits), lower case, and every decimal digit of any script
// folded to its ASCII digit (NFKC leaves Arabic-Indic or Devanagari digits alone, so a copy
// written in them would otherwise compare unequal).
func canonical(s string) []rune {
	s = decodeEntities(s)
	s = norm.NFKC.String(s)
	s = strings.ToLower(s)
	out := make([]rune, 0, len(s))
	for _, r := range s {
		out = append(out, foldDigit(r))
	}
	return out
}

// normalize is the comparison form laundering cannot change: the canonical text with only
// letters and digits kept — which drops whitespace, punctuation, Markdown emphasis and
// escapes, zero-width, bidi and every other format character.
func normalize(s string) []rune { return alnum(canonical(s)) }

func alnum(rs []rune) []rune {
	out := make([]rune, 0, len(rs))
	for _, r := range rs {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = append(out, r)
		}
	}
	return out
}

// foldDigit maps a decimal digit (Unicode category Nd) of any script to '0'..'9'. Every Nd
// range of the Unicode tables is a whole number of runs of ten consecutive digits starting
// at zero (TestFoldDigitRanges proves it for the linked tables).
func foldDigit(r rune) rune {
	if r < utf8.RuneSelf || !unicode.Is(unicode.Nd, r) {
		return r
	}
	for _, rg := range unicode.Nd.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return '0' + (r-lo)%10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return '0' + (r-lo)%10
		}
	}
	return r
}

func foldDigits(s string) string { return strings.Map(foldDigit, s) }

// percentDecode decodes %XX escapes (up to three rounds, for double encoding), leniently: an
// invalid escape such as "100% sure" stays as written, and bytes that do not form UTF-8 become
// U+FFFD. A percent-encoded copy of context or a secret is then compared like plain text.
func percentDecode(s string) string {
	for range 3 {
		if strings.IndexByte(s, '%') < 0 {
			return s
		}
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
				i += 2
				continue
			}
			b.WriteByte(s[i])
		}
		u := strings.ToValidUTF8(b.String(), "\uFFFD")
		if u == s {
			return s
		}
		s = u
	}
	return s
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// minExcerptAlnum is the fewest letters and digits an indexed excerpt key may have: a
// 24-character excerpt that is mostly punctuation or spacing carries too little text to
// compare without flagging ordinary prose.
const minExcerptAlnum = minWholeChars

// excerptIndex holds the forbidden excerpts as keys (their letters and digits, in order),
// by key length, for polynomial window hashing. Two kinds of excerpt are indexed:
//   - every excerptChars-character window of a canonical forbidden value (as the spec counts
//     an excerpt's characters: a 24-character copy with its spaces and punctuation), keyed
//     by its letters and digits, so a copy re-spaced, re-punctuated or laundered with format
//     characters still matches;
//   - every excerptChars-letter/digit window of the normalized value (a copy from which the
//     spacing was removed).
//
// prefix holds the hash of the first minExcerptAlnum letters/digits of every key: a window
// of a checked value is looked up at the longer lengths only when its prefix is indexed.
type excerptIndex struct {
	keys    map[int]map[uint64]struct{}
	prefix  map[uint64]struct{}
	lengths []int
	whole   map[string]struct{} // every normalized forbidden value, for whole-value equality
}

func newExcerptIndex() *excerptIndex {
	return &excerptIndex{keys: map[int]map[uint64]struct{}{}, prefix: map[uint64]struct{}{}, whole: map[string]struct{}{}}
}

const hashBase = 0x100000001b3

func hashRunes(rs []rune) uint64 {
	var h uint64
	for _, r := range rs {
		h = h*hashBase + uint64(r) + 1
	}
	return h
}

func (x *excerptIndex) addKey(k []rune) {
	m, ok := x.keys[len(k)]
	if !ok {
		m = map[uint64]struct{}{}
		x.keys[len(k)] = m
		x.lengths = append(x.lengths, len(k))
		sort.Ints(x.lengths)
	}
	m[hashRunes(k)] = struct{}{}
	x.prefix[hashRunes(k[:minExcerptAlnum])] = struct{}{}
}

// add indexes one canonical forbidden value; it returns the value's normalized form.
func (x *excerptIndex) add(c []rune) []rune {
	n := make([]rune, 0, len(c))
	at := make([]int, len(c)+1) // at[i]: letters/digits in c[:i]
	for i, r := range c {
		at[i] = len(n)
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n = append(n, r)
		}
	}
	at[len(c)] = len(n)
	if len(n) > 0 {
		x.whole[string(n)] = struct{}{}
	}
	for i := 0; i+excerptChars <= len(n); i++ {
		x.addKey(n[i : i+excerptChars])
	}
	for i := 0; i+excerptChars <= len(c); i++ {
		if k := n[at[i]:at[i+excerptChars]]; len(k) >= minExcerptAlnum {
			x.addKey(k)
		}
	}
	return n
}

// contains reports whether the normalized value n contains an indexed excerpt key.
func (x *excerptIndex) contains(n []rune) bool {
	if len(n) < minExcerptAlnum || len(x.lengths) == 0 {
		return false
	}
	maxLen := x.lengths[len(x.lengths)-1]
	pow := make([]uint64, maxLen+1)
	pow[0] = 1
	for i := 1; i <= maxLen; i++ {
		pow[i] = pow[i-1] * hashBase
	}
	pre := make([]uint64, len(n)+1)
	for i, r := range n {
		pre[i+1] = pre[i]*hashBase + uint64(r) + 1
	}
	win := func(i, k int) uint64 { return pre[i+k] - pre[i]*pow[k] }
	for i := 0; i+minExcerptAlnum <= len(n); i++ {
		if _, ok := x.prefix[win(i, minExcerptAlnum)]; !ok {
			continue
		}
		for _, k := range x.lengths {
			if i+k > len(n) {
				break
			}
			if _, ok := x.keys[k][win(i, k)]; ok {
				return true
			}
		}
	}
	return false
}

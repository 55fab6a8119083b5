package canon

import (
	"bytes"
	"unicode/utf8"
)

// IsCanonical reports whether doc is exactly its own RFC 8785 form: Transform(doc) succeeds
// and returns doc byte for byte. It is how a consumer checks that a document is canonical.
//
// Most documents are checked in one pass without building a parse tree (Transform allocates
// a node per value, which dominated verifying a 100k-record tree): a document made only of
// objects whose member names are printable ASCII without escapes, in strictly increasing byte
// order, arrays, strings in RFC 8785 escaping (the two-character escapes for quote, backslash,
// b, f, n, r and t, \u00xx in lowercase for other control characters, every other character
// as itself in valid UTF-8), true, false, null and integers of at most 15 digits, with no
// whitespace, is exactly what Transform writes for it: for ASCII names byte order is UTF-16
// order, strictly increasing excludes duplicates, and such an integer is exactly a double
// whose ES6 form is its digits. Any other document (a fraction, an exponent, a non-ASCII or
// escaped name, whitespace, an error) gets Transform's verdict, so the answer never differs
// from comparing with Transform (FuzzIsCanonical).
func IsCanonical(doc []byte) bool {
	if fastCanonical(doc) {
		return true
	}
	c, err := Transform(doc)
	return err == nil && bytes.Equal(c, doc)
}

// maxFastDepth bounds the nesting the one-pass check follows; deeper documents go to
// Transform (which has its own bound).
const maxFastDepth = 64

// fastCanonical reports true only for a document of the restricted form IsCanonical describes;
// false means "not shown", not "not canonical".
func fastCanonical(doc []byte) bool {
	end, ok := fastValue(doc, 0, 0)
	return ok && end == len(doc)
}

// fastValue checks the value at doc[i] and returns the offset just past it.
func fastValue(doc []byte, i, depth int) (int, bool) {
	if i >= len(doc) || depth > maxFastDepth {
		return i, false
	}
	switch c := doc[i]; {
	case c == '{':
		return fastObject(doc, i+1, depth+1)
	case c == '[':
		return fastArray(doc, i+1, depth+1)
	case c == '"':
		return fastString(doc, i)
	case c == 't':
		return fastLiteral(doc, i, "true")
	case c == 'f':
		return fastLiteral(doc, i, "false")
	case c == 'n':
		return fastLiteral(doc, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return fastInteger(doc, i)
	}
	return i, false
}

func fastLiteral(doc []byte, i int, lit string) (int, bool) {
	if len(doc)-i < len(lit) || string(doc[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// fastInteger accepts 0 or an optional minus and 1 to 15 digits without a leading zero (not
// -0, which RFC 8785 writes as 0), followed by nothing that would continue a number.
func fastInteger(doc []byte, i int) (int, bool) {
	start := i
	if doc[i] == '-' {
		i++
	}
	digits := i
	for i < len(doc) && doc[i] >= '0' && doc[i] <= '9' {
		i++
	}
	n := i - digits
	switch {
	case n == 0 || n > 15:
		return i, false
	case doc[digits] == '0' && (n > 1 || digits > start):
		return i, false
	case i < len(doc) && (doc[i] == '.' || doc[i] == 'e' || doc[i] == 'E'):
		return i, false
	}
	return i, true
}

// fastString accepts a string in RFC 8785 escaping (see IsCanonical).
func fastString(doc []byte, i int) (int, bool) {
	i++ // the opening quote
	ascii := true
	start := i
	for i < len(doc) {
		c := doc[i]
		switch {
		case c == '"':
			if !ascii && !utf8.Valid(doc[start:i]) {
				return i, false
			}
			return i + 1, true
		case c < 0x20:
			return i, false
		case c >= 0x80:
			ascii = false
			i++
		case c == '\\':
			if i+1 >= len(doc) {
				return i, false
			}
			switch doc[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				// Only \u00xx (lowercase) for a control character without a short form.
				if len(doc)-i < 6 || doc[i+2] != '0' || doc[i+3] != '0' || !lowerHex(doc[i+4]) || !lowerHex(doc[i+5]) {
					return i, false
				}
				v := hexVal(doc[i+4])<<4 | hexVal(doc[i+5])
				if v >= 0x20 || v == '\b' || v == '\f' || v == '\n' || v == '\r' || v == '\t' {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		default:
			i++
		}
	}
	return i, false
}

func lowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// fastArray checks the items after '[' up to and including ']'.
func fastArray(doc []byte, i, depth int) (int, bool) {
	if i < len(doc) && doc[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = fastValue(doc, i, depth); !ok || i >= len(doc) {
			return i, false
		}
		switch doc[i] {
		case ',':
			i++
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// fastObject checks the members after '{' up to and including '}': names of printable ASCII
// without quote or backslash, strictly increasing.
func fastObject(doc []byte, i, depth int) (int, bool) {
	if i < len(doc) && doc[i] == '}' {
		return i + 1, true
	}
	var prev []byte
	for {
		if i >= len(doc) || doc[i] != '"' {
			return i, false
		}
		start := i + 1
		j := start
		for j < len(doc) && doc[j] != '"' {
			if c := doc[j]; c < 0x20 || c > 0x7e || c == '\\' {
				return j, false
			}
			j++
		}
		if j >= len(doc) {
			return j, false
		}
		name := doc[start:j]
		if prev != nil && bytes.Compare(prev, name) >= 0 {
			return j, false
		}
		prev = name
		i = j + 1
		if i >= len(doc) || doc[i] != ':' {
			return i, false
		}
		var ok bool
		if i, ok = fastValue(doc, i+1, depth); !ok || i >= len(doc) {
			return i, false
		}
		switch doc[i] {
		case ',':
			i++
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

package distill

import (
	"strconv"
	"unicode/utf8"
)

// The excerpt is built as an ordered tree and written by hand rather than through a Go map and
// encoding/json: the key order is part of the documented format ("path and line before body")
// and maps have none.

// member is one key of an ordered object.
type member struct {
	key string
	val value
}

// value is one of: str, num, bool, object, array.
type value interface{ isValue() }

type (
	str    string
	num    int64
	boolV  bool
	object []member
	array  []value
)

func (str) isValue()    {}
func (num) isValue()    {}
func (boolV) isValue()  {}
func (object) isValue() {}
func (array) isValue()  {}

// encode writes v as compact JSON. Strings are escaped so that no byte of a value can end the
// string early: quotes, backslashes, every control character, DEL and the two JavaScript line
// separators; invalid UTF-8 becomes U+FFFD. HTML characters are left alone (the excerpt is
// prompt text, not HTML) so that a body keeps its length and readability.
func encode(v value) []byte {
	return appendValue(nil, v)
}

func appendValue(b []byte, v value) []byte {
	switch t := v.(type) {
	case str:
		return appendString(b, string(t))
	case num:
		return strconv.AppendInt(b, int64(t), 10)
	case boolV:
		return strconv.AppendBool(b, bool(t))
	case object:
		b = append(b, '{')
		for i, m := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.key)
			b = append(b, ':')
			b = appendValue(b, m.val)
		}
		return append(b, '}')
	case array:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	}
	return append(b, "null"...)
}

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b = append(b, '\\', '"')
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, "\ufffd"...)
		case r == '\u2028':
			b = append(b, `\u2028`...)
		case r == '\u2029':
			b = append(b, `\u2029`...)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

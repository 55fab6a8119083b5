package acquisition

import (
	"encoding/json"
	"fmt"
)

// CheckKeys enforces the interchange's object-key rule on a syntactically valid JSON document:
// every member name is lowercase ASCII [a-z0-9_] and occurs at most once per object.
//
// Why: encoding/json keeps the last of duplicated keys and matches member names
// case-insensitively (with Unicode folding: "ſ" matches "s"), so {"forge":"github",
// "FORGE":"gitlab"} would silently decode to one of them while another parser reads the other.
// An untrusted acquisition (or profile, or bot registry) must mean exactly one thing, so such a
// document is refused rather than interpreted. Every member name of these formats is lowercase
// snake_case, so the rule rejects no valid document.
func CheckKeys(data []byte) error {
	var k keyScanner
	k.Write(data)
	return k.err
}

// keyScanner is CheckKeys over a stream: Write feeds it the document in pieces of any size
// (Read tees the file through it while decoding, so the document is never held whole), and
// err is the first violation. Offsets count from the first byte written. Only member names
// are kept (a string value, however long, is skipped byte by byte).
type keyScanner struct {
	stack []keyFrame
	off   int64 // offset of the next byte
	err   error

	inString bool
	isKey    bool  // the string being scanned is a member name
	escape   bool  // the previous byte was a backslash
	escaped  bool  // the member name contains an escape
	start    int64 // offset of the member name's opening quote
	key      []byte
}

type keyFrame struct {
	object    bool
	expectKey bool
	keys      []string
}

// Write scans p; it never fails (the violation, if any, is in k.err).
func (k *keyScanner) Write(p []byte) (int, error) {
	if k.err != nil {
		return len(p), nil
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if k.inString {
			i = k.stringByte(p, i)
			if k.err != nil {
				return len(p), nil
			}
			continue
		}
		switch c {
		case '{':
			k.stack = append(k.stack, keyFrame{object: true, expectKey: true})
		case '[':
			k.stack = append(k.stack, keyFrame{})
		case '}', ']':
			if len(k.stack) > 0 {
				k.stack = k.stack[:len(k.stack)-1]
			}
		case ',':
			if n := len(k.stack); n > 0 && k.stack[n-1].object {
				k.stack[n-1].expectKey = true
			}
		case '"':
			k.inString, k.escape, k.escaped = true, false, false
			n := len(k.stack)
			k.isKey = n > 0 && k.stack[n-1].object && k.stack[n-1].expectKey
			if k.isKey {
				k.stack[n-1].expectKey = false
				k.start = k.off + int64(i)
				k.key = k.key[:0]
			}
		}
	}
	k.off += int64(len(p))
	return len(p), nil
}

// stringByte consumes string bytes from p[i] on and returns the index of the last byte it
// consumed: up to the closing quote (which ends the string) or the end of p.
func (k *keyScanner) stringByte(p []byte, i int) int {
	for ; i < len(p); i++ {
		c := p[i]
		switch {
		case k.escape:
			k.escape = false
		case c == '\\':
			k.escape, k.escaped = true, true
		case c == '"':
			k.inString = false
			if k.isKey {
				k.endKey()
			}
			return i
		}
		if k.isKey {
			k.key = append(k.key, c)
		}
	}
	return i
}

// endKey applies the rule to the member name just scanned.
func (k *keyScanner) endKey() {
	key := string(k.key)
	if k.escaped {
		raw := append(append([]byte{'"'}, k.key...), '"')
		if err := json.Unmarshal(raw, &key); err != nil {
			k.err = fmt.Errorf("member name at byte %d: %w", k.start, err)
			return
		}
	}
	if !snakeKey(key) {
		k.err = fmt.Errorf("member name at byte %d: must be lowercase [a-z0-9_] (the interchange's names are exact)", k.start)
		return
	}
	top := &k.stack[len(k.stack)-1]
	for _, x := range top.keys {
		if x == key {
			k.err = fmt.Errorf("member %q at byte %d: duplicated in one object", key, k.start)
			return
		}
	}
	top.keys = append(top.keys, key)
}

func snakeKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

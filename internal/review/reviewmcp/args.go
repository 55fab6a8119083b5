package reviewmcp

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// argKind is the JSON type of one tool argument.
type argKind byte

const (
	argString argKind = 's'
	argInt    argKind = 'i'
)

type argSpec struct {
	name string
	kind argKind
}

// args are decoded tool arguments: strings and int64 by name.
type args map[string]any

func (a args) str(name string) (string, bool) {
	v, ok := a[name].(string)
	return v, ok
}

func (a args) integer(name string) (int64, bool) {
	v, ok := a[name].(int64)
	return v, ok
}

// parseArgs decodes a flat JSON object of the given string and integer fields strictly:
// absent or null arguments mean {}; an unknown, duplicated or mistyped field, a non-integer
// number, nesting, or trailing data is refused. Refusals name the field (for a known field)
// or the rule, never a value or an unknown key.
func parseArgs(raw json.RawMessage, specs ...argSpec) (args, error) {
	out := args{}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	if !utf8.Valid(raw) {
		return nil, refusef("arguments", "not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, refusef("arguments", "must be a JSON object")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, refusef("arguments", "invalid JSON")
		}
		k, _ := kt.(string)
		var spec *argSpec
		for i := range specs {
			if specs[i].name == k {
				spec = &specs[i]
			}
		}
		if spec == nil {
			return nil, refusef("arguments", "unknown field")
		}
		if _, dup := out[k]; dup {
			return nil, refusef(k, "duplicate field")
		}
		v, err := dec.Token()
		if err != nil {
			return nil, refusef(k, "invalid JSON")
		}
		switch spec.kind {
		case argString:
			s, ok := v.(string)
			if !ok {
				return nil, refusef(k, "must be a string")
			}
			out[k] = s
		case argInt:
			n, ok := v.(json.Number)
			if !ok {
				return nil, refusef(k, "must be an integer")
			}
			x, err := strconv.ParseInt(n.String(), 10, 64)
			if err != nil || strconv.FormatInt(x, 10) != n.String() {
				return nil, refusef(k, "must be an integer in plain decimal form")
			}
			out[k] = x
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, refusef("arguments", "invalid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, refusef("arguments", "trailing data")
	}
	return out, nil
}

// oneOf checks an optional closed-value string argument.
func oneOf(a args, name string, vals []string) (string, error) {
	v, ok := a.str(name)
	if !ok {
		return "", nil
	}
	for _, x := range vals {
		if v == x {
			return v, nil
		}
	}
	return "", refusef(name, "must be one of %s", strings.Join(vals, ", "))
}

// intIn checks an optional integer argument within [lo, hi], def when absent.
func intIn(a args, name string, lo, hi, def int64) (int, error) {
	v, ok := a.integer(name)
	if !ok {
		return int(def), nil
	}
	if v < lo || v > hi {
		return 0, refusef(name, "must be %d..%d", lo, hi)
	}
	return int(v), nil
}

// Query bounds of the literal search.
const (
	maxQueryChars  = 128
	maxQueryTokens = 8
)

// parseQuery validates a literal query: 1–128 characters, no control or format character,
// 1–8 whitespace-separated tokens. Tokens are matched case-insensitively as literal
// substrings (no pattern syntax). Refusals never echo the query.
func parseQuery(q string) (literal, error) {
	n := utf8.RuneCountInString(q)
	if n < 1 || n > maxQueryChars {
		return nil, refusef("query", "must be 1..%d characters", maxQueryChars)
	}
	for _, r := range q {
		if r != ' ' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			return nil, refusef("query", "control or format characters are not allowed")
		}
	}
	toks := strings.Fields(q)
	if len(toks) < 1 || len(toks) > maxQueryTokens {
		return nil, refusef("query", "must have 1..%d literal tokens", maxQueryTokens)
	}
	for i := range toks {
		toks[i] = strings.ToLower(toks[i])
	}
	return literal(toks), nil
}

// cursors mints and checks opaque page cursors: an offset and a MAC over the offset and the
// query it continues, keyed per process, so a forged, altered or cross-query cursor is
// refused.
type cursors struct{ key [32]byte }

func newCursors() (*cursors, error) {
	c := &cursors{}
	if _, err := rand.Read(c.key[:]); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *cursors) mac(off uint32, query string) []byte {
	m := hmac.New(sha256.New, c.key[:])
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], off)
	m.Write(b[:])
	m.Write([]byte(query))
	return m.Sum(nil)[:16]
}

func (c *cursors) mint(off int, query string) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(off))
	return base64.RawURLEncoding.EncodeToString(append(b[:], c.mac(uint32(off), query)...))
}

// open returns the offset of a cursor minted for the same query, within [0, max].
func (c *cursors) open(cur, query string, max int) (int, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(cur)
	if err != nil || len(b) != 20 {
		return 0, refusef("cursor", "not a cursor of this server")
	}
	off := binary.BigEndian.Uint32(b[:4])
	if !hmac.Equal(b[4:], c.mac(off, query)) || int(off) > max {
		return 0, refusef("cursor", "not a cursor of this server for this query")
	}
	return int(off), nil
}

package reviewresult

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// node is one rule of the strict walker's field table.
type node struct {
	kind     byte // 'o' object, 'm' map, 'a' array, 's' string, 'i' integer
	fields   []fieldRule
	elem     *node
	maxItems int
	keyRule  *regexp.Regexp
	minLen   int
	maxLen   int
	enum     []string
	min, max int64
}

type fieldRule struct {
	name     string
	required bool
	n        *node
}

func object(fs ...fieldRule) *node            { return &node{kind: 'o', fields: fs} }
func field(name string, n *node) fieldRule    { return fieldRule{name: name, required: true, n: n} }
func optional(name string, n *node) fieldRule { return fieldRule{name: name, n: n} }
func array(max int, elem *node) *node         { return &node{kind: 'a', maxItems: max, elem: elem} }
func str(min, max int) *node                  { return &node{kind: 's', minLen: min, maxLen: max} }
func enum(vals ...string) *node               { return &node{kind: 's', enum: vals, maxLen: 64} }
func integer(min, max int64) *node            { return &node{kind: 'i', min: min, max: max} }
func mapOf(max int, key *regexp.Regexp, v *node) *node {
	return &node{kind: 'm', maxItems: max, keyRule: key, elem: v}
}

// maxDepth bounds nesting; the format itself is at most four levels deep.
const maxDepth = 8

// decodeStrict walks b once against the field table (rejecting invalid UTF-8, duplicate or
// unknown keys, missing fields, null, wrong types, non-integers, out-of-range values and
// trailing data, with the JSON path in every error) and only then unmarshals into v, which
// cannot fail on a document that passed the walk.
func decodeStrict(b []byte, root *node, v any) error {
	if !utf8.Valid(b) {
		return errf("$", "not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := walk(dec, root, "$", 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errf("$", "trailing data after the JSON object")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errf("$", "does not decode: %v", err)
	}
	return nil
}

func token(dec *json.Decoder, path string) (json.Token, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, errf(path, "invalid JSON")
	}
	return t, nil
}

func walk(dec *json.Decoder, n *node, path string, depth int) error {
	if depth > maxDepth {
		return errf(path, "nesting deeper than %d", maxDepth)
	}
	t, err := token(dec, path)
	if err != nil {
		return err
	}
	if t == nil {
		return errf(path, "null is not allowed")
	}
	switch n.kind {
	case 'o', 'm':
		if d, ok := t.(json.Delim); !ok || d != '{' {
			return errf(path, "must be a JSON object")
		}
		if n.kind == 'o' {
			return walkObject(dec, n, path, depth)
		}
		return walkMap(dec, n, path, depth)
	case 'a':
		if d, ok := t.(json.Delim); !ok || d != '[' {
			return errf(path, "must be a JSON array")
		}
		i := 0
		for ; dec.More(); i++ {
			if i >= n.maxItems {
				return errf(path, "more than %d items", n.maxItems)
			}
			if err := walk(dec, n.elem, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
		_, err := token(dec, path)
		return err
	case 's':
		s, ok := t.(string)
		if !ok {
			return errf(path, "must be a string")
		}
		return checkString(n, s, path)
	case 'i':
		num, ok := t.(json.Number)
		if !ok {
			return errf(path, "must be an integer")
		}
		x, err := strconv.ParseInt(num.String(), 10, 64)
		if err != nil || strconv.FormatInt(x, 10) != num.String() {
			return errf(path, "must be an integer in plain decimal form")
		}
		if x < n.min || x > n.max {
			return errf(path, "out of range %d..%d", n.min, n.max)
		}
		return nil
	}
	return errf(path, "unsupported rule")
}

func checkString(n *node, s, path string) error {
	if n.enum != nil {
		for _, e := range n.enum {
			if s == e {
				return nil
			}
		}
		return errf(path, "not one of the closed values")
	}
	if len(s) < n.minLen || len(s) > n.maxLen {
		return errf(path, "must be %d..%d bytes", n.minLen, n.maxLen)
	}
	return nil
}

// walkMembers walks the members of an object whose '{' has been read, through its '}', and
// returns the keys it saw. Both object kinds reject in the same order: value first judges the
// key (unknown field, key pattern) and names the node of its value, then a repeated key is
// refused, then a key beyond limit, and only then is the value walked.
func walkMembers(dec *json.Decoder, path string, depth, limit int, value func(k string) (*node, error)) (map[string]bool, error) {
	seen := map[string]bool{}
	for dec.More() {
		kt, err := token(dec, path)
		if err != nil {
			return nil, err
		}
		k, _ := kt.(string)
		vn, err := value(k)
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, errf(path+"."+k, "duplicate key")
		}
		seen[k] = true
		if len(seen) > limit {
			return nil, errf(path, "more than %d entries", limit)
		}
		if err := walk(dec, vn, path+"."+k, depth+1); err != nil {
			return nil, err
		}
	}
	if _, err := token(dec, path); err != nil {
		return nil, err
	}
	return seen, nil
}

func walkObject(dec *json.Decoder, n *node, path string, depth int) error {
	// No limit: an object cannot outgrow its fields, unknown and repeated keys being refused.
	seen, err := walkMembers(dec, path, depth, math.MaxInt, func(k string) (*node, error) {
		for i := range n.fields {
			if n.fields[i].name == k {
				return n.fields[i].n, nil
			}
		}
		// The key is input: it is not echoed, only counted as unknown at this path.
		return nil, errf(path, "unknown field")
	})
	if err != nil {
		return err
	}
	for _, f := range n.fields {
		if f.required && !seen[f.name] {
			return errf(path+"."+f.name, "required field missing")
		}
	}
	return nil
}

func walkMap(dec *json.Decoder, n *node, path string, depth int) error {
	_, err := walkMembers(dec, path, depth, n.maxItems, func(k string) (*node, error) {
		if !n.keyRule.MatchString(k) {
			return nil, errf(path, "key does not match %s", n.keyRule)
		}
		return n.elem, nil
	})
	return err
}

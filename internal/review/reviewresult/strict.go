package reviewresult

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

func walkObject(dec *json.Decoder, n *node, path string, depth int) error {
	seen := map[string]bool{}
	for dec.More() {
		kt, err := token(dec, path)
		if err != nil {
			return err
		}
		k, _ := kt.(string)
		var rule *fieldRule
		for i := range n.fields {
			if n.fields[i].name == k {
				rule = &n.fields[i]
			}
		}
		if rule == nil {
			// The key is input: it is not echoed, only counted as unknown at this path.
			return errf(path, "unknown field")
		}
		if seen[k] {
			return errf(path+"."+k, "duplicate key")
		}
		seen[k] = true
		if err := walk(dec, rule.n, path+"."+k, depth+1); err != nil {
			return err
		}
	}
	if _, err := token(dec, path); err != nil {
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
	seen := map[string]bool{}
	for dec.More() {
		kt, err := token(dec, path)
		if err != nil {
			return err
		}
		k, _ := kt.(string)
		if !n.keyRule.MatchString(k) {
			return errf(path, "key does not match %s", n.keyRule)
		}
		if seen[k] {
			return errf(fmt.Sprintf("%s.%s", path, k), "duplicate key")
		}
		seen[k] = true
		if len(seen) > n.maxItems {
			return errf(path, "more than %d entries", n.maxItems)
		}
		if err := walk(dec, n.elem, path+"."+k, depth+1); err != nil {
			return err
		}
	}
	_, err := token(dec, path)
	return err
}

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
	type frame struct {
		object    bool
		expectKey bool
		keys      []string
	}
	var stack []frame
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			stack = append(stack, frame{object: true, expectKey: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].expectKey = true
			}
		case '"':
			start, escaped := i, false
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					escaped = true
					i++
				}
			}
			n := len(stack)
			if n == 0 || !stack[n-1].object || !stack[n-1].expectKey {
				continue
			}
			top := &stack[n-1]
			top.expectKey = false
			key := string(data[start+1 : min(i, len(data))])
			if escaped {
				if err := json.Unmarshal(data[start:min(i+1, len(data))], &key); err != nil {
					return fmt.Errorf("member name at byte %d: %w", start, err)
				}
			}
			if !snakeKey(key) {
				return fmt.Errorf("member name at byte %d: must be lowercase [a-z0-9_] (the interchange's names are exact)", start)
			}
			for _, k := range top.keys {
				if k == key {
					return fmt.Errorf("member %q at byte %d: duplicated in one object", key, start)
				}
			}
			top.keys = append(top.keys, key)
		}
	}
	return nil
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

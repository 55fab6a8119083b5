package reviewctx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// strictValue is a JSON value decoded without loss of the facts a policy or frame parser must
// reject: duplicate keys and the exact key spelling. Objects keep their keys; numbers stay
// json.Number so that 1.0 and 1e2 are told apart from integers.
type strictValue struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	obj  map[string]*strictValue
	keys []string // object keys in document order
	arr  []*strictValue
	str  string
	num  json.Number
	b    bool
}

// maxJSONDepth bounds nesting so hostile input cannot exhaust the stack.
const maxJSONDepth = 32

// parseStrict decodes exactly one JSON value from b. It rejects invalid UTF-8, duplicate
// object keys, trailing data and nesting deeper than maxJSONDepth.
func parseStrict(b []byte) (*strictValue, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := parseValue(dec, 0, "$")
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder, depth int, path string) (*strictValue, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("%s: nesting deeper than %d", path, maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %v", path, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &strictValue{kind: 'o', obj: map[string]*strictValue{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("%s: invalid JSON: %v", path, err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("%s: invalid JSON object key", path)
				}
				if _, dup := v.obj[k]; dup {
					return nil, fmt.Errorf("%s.%s: duplicate key", path, k)
				}
				child, err := parseValue(dec, depth+1, path+"."+k)
				if err != nil {
					return nil, err
				}
				v.obj[k] = child
				v.keys = append(v.keys, k)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("%s: invalid JSON: %v", path, err)
			}
			return v, nil
		case '[':
			v := &strictValue{kind: 'a'}
			for i := 0; dec.More(); i++ {
				child, err := parseValue(dec, depth+1, fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, child)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("%s: invalid JSON: %v", path, err)
			}
			return v, nil
		}
		return nil, fmt.Errorf("%s: invalid JSON delimiter", path)
	case string:
		return &strictValue{kind: 's', str: t}, nil
	case json.Number:
		return &strictValue{kind: 'n', num: t}, nil
	case bool:
		return &strictValue{kind: 'b', b: t}, nil
	case nil:
		return &strictValue{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("%s: invalid JSON token", path)
}

// objReader reads the fields of one strict object and remembers which were consumed, so
// that unknown fields can be reported by name.
type objReader struct {
	path string
	v    *strictValue
	used map[string]bool
	err  error
}

func newObj(path string, v *strictValue) (*objReader, error) {
	if v == nil || v.kind != 'o' {
		return nil, fmt.Errorf("%s: must be a JSON object", path)
	}
	return &objReader{path: path, v: v, used: map[string]bool{}}, nil
}

func (o *objReader) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

func (o *objReader) field(name string, required bool) *strictValue {
	v, ok := o.v.obj[name]
	o.used[name] = true
	if !ok {
		if required {
			o.fail(fmt.Errorf("%s.%s: required field missing", o.path, name))
		}
		return nil
	}
	return v
}

// typed reads the field name and checks that it is a JSON value of kind; rule says what the
// field must be when it is not. It returns nil, the caller's cue to return its zero or default,
// when the field is absent (an error when required) or of another kind (an error).
func (o *objReader) typed(name string, required bool, kind byte, rule string) *strictValue {
	v := o.field(name, required)
	if v == nil {
		return nil
	}
	if v.kind != kind {
		o.fail(fmt.Errorf("%s.%s: %s", o.path, name, rule))
		return nil
	}
	return v
}

func (o *objReader) has(name string) bool { _, ok := o.v.obj[name]; return ok }

func (o *objReader) str(name string, required bool) string {
	v := o.typed(name, required, 's', "must be a string")
	if v == nil {
		return ""
	}
	return v.str
}

func (o *objReader) boolean(name string, required bool) bool {
	v := o.typed(name, required, 'b', "must be true or false")
	return v != nil && v.b
}

// integer reads an integer in [lo, hi]; def is returned when the field is absent and not
// required.
func (o *objReader) integer(name string, required bool, lo, hi, def int64) int64 {
	v := o.typed(name, required, 'n', "must be an integer")
	if v == nil {
		return def
	}
	n, err := v.num.Int64()
	if err != nil || v.num.String() != fmt.Sprint(n) {
		o.fail(fmt.Errorf("%s.%s: must be an integer written without fraction or exponent", o.path, name))
		return def
	}
	if n < lo || n > hi {
		o.fail(fmt.Errorf("%s.%s: %d outside the allowed range %d..%d", o.path, name, n, lo, hi))
		return def
	}
	return n
}

// strList reads an array of strings.
func (o *objReader) strList(name string, required bool) []string {
	v := o.typed(name, required, 'a', "must be an array of strings")
	if v == nil {
		return nil
	}
	out := make([]string, 0, len(v.arr))
	for i, e := range v.arr {
		if e.kind != 's' {
			o.fail(fmt.Errorf("%s.%s[%d]: must be a string", o.path, name, i))
			return nil
		}
		out = append(out, e.str)
	}
	return out
}

// done reports the first error, or the first field (in document order) that was never read.
func (o *objReader) done() error {
	if o.err != nil {
		return o.err
	}
	for _, k := range o.v.keys {
		if !o.used[k] {
			return fmt.Errorf("%s.%s: unknown field", o.path, k)
		}
	}
	return nil
}

package canon

import (
	"bytes"
	"strings"
	"testing"
)

// canonicalSeeds cover each rule of the one-pass check on both sides: canonical documents of
// every accepted shape, and documents that break exactly one rule (member order, a duplicate,
// whitespace, an escape with a shorter form, uppercase hex, a solidus escape, a fraction, an
// exponent, a leading zero, -0, 16 digits, invalid UTF-8, a non-ASCII name, trailing bytes).
var deepDoc = `[` + strings.Repeat(`[`, maxFastDepth+16) + strings.Repeat(`]`, maxFastDepth+17)

var canonicalSeeds = []struct {
	doc       string
	canonical bool
}{
	{`{}`, true}, {`[]`, true}, {`""`, true}, {`0`, true}, {`-12`, true}, {`true`, true}, {`null`, true},
	{`{"a":1,"b":[true,false,null,"x"],"c":{"d":""}}`, true},
	{`{"a":"\"\\\b\f\n\r\t\u0000\u001f\u007f"}`, false}, // \u007f has no escape in RFC 8785
	{`{"a":"\"\\\b\f\n\r\t\u0000\u001f"}`, true},
	{"{\"a\":\"\x7f é € 😀 /\"}", true},
	{`{"b":1,"a":2}`, false}, {`{"a":1,"a":1}`, false}, {`{"a": 1}`, false}, {` {}`, false}, {`{}` + "\n", false},
	{`"\u000a"`, false}, {`"\u001F"`, false}, {`"\/"`, false}, {`"\u0041"`, false}, {`1.5`, true}, {`1.50`, false}, {`1.0`, false},
	{`1e3`, false}, {`01`, false}, {`-0`, false}, {`1234567890123456`, true}, {`12345678901234567890`, false}, {`123456789012345`, true},
	{"\"\xff\"", false}, {"\"\xed\xa0\x80\"", false}, {`{"é":1}`, true}, {`{"\u00e9":1}`, false}, {`[1,]`, false},
	{`[1 ]`, false}, {`{"a":1}x`, false}, {`tru`, false}, {deepDoc, true},
	{`{"a\"b":1}`, true}, {`{"b":1,"a\"":2}`, false}, {`1E2`, false}, {`{"":1,"a":2}`, true},
}

// IsCanonical agrees with comparing Transform's output on every input: the one-pass check
// accepts only documents Transform leaves unchanged, and everything else gets Transform's
// verdict.
func FuzzIsCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s.doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		c, err := Transform(doc)
		want := err == nil && bytes.Equal(c, doc)
		if fastCanonical(doc) && !want {
			t.Fatalf("the one-pass check accepts %q, which Transform writes as %q (%v)", doc, c, err)
		}
		if got := IsCanonical(doc); got != want {
			t.Fatalf("IsCanonical(%q) = %v, Transform says %v", doc, got, want)
		}
	})
}

// slowOnly are the canonical seeds outside the one-pass form: a fraction, 16 digits, nesting
// deeper than maxFastDepth, an escaped or non-ASCII member name.
var slowOnly = map[string]bool{`1.5`: true, `1234567890123456`: true, deepDoc: true, `{"a\"b":1}`: true, `{"é":1}`: true}

// The seeds' verdicts are the RFC 8785 ones, and the one-pass check really decides the
// canonical seeds it is meant to (else IsCanonical would only ever be Transform).
func TestIsCanonicalSeeds(t *testing.T) {
	for _, s := range canonicalSeeds {
		if got := IsCanonical([]byte(s.doc)); got != s.canonical {
			t.Errorf("IsCanonical(%q) = %v, want %v", s.doc, got, s.canonical)
		}
		if s.canonical && !fastCanonical([]byte(s.doc)) && !slowOnly[s.doc] {
			t.Errorf("the one-pass check does not decide canonical %q", s.doc)
		}
	}
}

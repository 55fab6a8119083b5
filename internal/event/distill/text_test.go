package distill

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestR3_1_MarkerIsInsideTheValueAndTheCapHolds(t *testing.T) {
	cases := []struct {
		in    string
		limit int
		cut   bool
	}{
		{"short", 64, false},
		{strings.Repeat("a", 64), 64, false},
		{strings.Repeat("a", 65), 64, true},
		{strings.Repeat("日本", 5000), 2000, true},
		{strings.Repeat("🙂", 100000), 64, true},
	}
	for _, tc := range cases {
		got, cut := capText(tc.in, tc.limit)
		if cut != tc.cut {
			t.Errorf("len %d cap %d: cut %v", len(tc.in), tc.limit, cut)
		}
		if n := utf8.RuneCountInString(got); n > tc.limit || !utf8.ValidString(got) {
			t.Errorf("cap %d: %d characters, valid %v", tc.limit, n, utf8.ValidString(got))
		}
		if cut {
			total := utf8.RuneCountInString(tc.in)
			kept := strings.SplitN(got, "\n"+markerPrefix, 2)[0]
			if got != kept+marker(utf8.RuneCountInString(kept), total) || !strings.HasPrefix(tc.in, kept) {
				t.Errorf("cap %d: bad marker or prefix: %q", tc.limit, got[len(kept):])
			}
		} else if got != tc.in {
			t.Errorf("uncut value changed")
		}
	}
}

func TestEncoderEscapesEverythingThatCouldEndAString(t *testing.T) {
	got := string(encode(object{{"k\"", str("a\"b\\c\n\r\t\x00\x1f\x7f\u2028\u2029\xff<&>")}, {"n", num(-3)}, {"b", boolV(true)}, {"a", array{str("x"), num(1)}}}))
	want := `{"k\"":"a\"b\\c\n\r\t\u0000\u001f\u007f\u2028\u2029` + "\ufffd" + `<&>","n":-3,"b":true,"a":["x",1]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

package filter

import (
	"context"
	"testing"
	"unicode/utf8"
)

// The floor classes of the spec ("Canonical bytes"), written out independently of
// classifyTables: FloorCode must agree with them on every rune.
func specFloor(r rune) bool {
	return r >= 0xE0000 && r <= 0xE007F || r >= 0x200B && r <= 0x200D || r == 0xFEFF ||
		r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 ||
		r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF || r >= 0xFFF9 && r <= 0xFFFB
}

func TestFloorCodeIsExactlyTheSpecFloor(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		_, got := FloorCode(r)
		if got != specFloor(r) {
			t.Fatalf("FloorCode(%U) = %v, spec floor says %v", r, got, specFloor(r))
		}
	}
	for _, r := range []rune{0, 0x200E, 0x2060, 0xAD, 0x85} { // shipped extras, not floor
		if _, ok := FloorCode(r); ok {
			t.Errorf("FloorCode(%U) must be false: a shipped extra, not a floor class", r)
		}
	}
	if c, _ := FloorCode(0x200B); c != "unicode.zero-width" {
		t.Errorf("FloorCode(U+200B) code = %q", c)
	}
}

// TestIndexFloorLeadBytes proves IndexFloor's lead-byte prefilter loses no floor rune.
func TestIndexFloorLeadBytes(t *testing.T) {
	var buf [4]byte
	for r := rune(0x80); r <= utf8.MaxRune; r++ {
		if _, ok := FloorCode(r); !ok {
			continue
		}
		utf8.EncodeRune(buf[:], r)
		if buf[0] != 0xE2 && buf[0] != 0xEF && buf[0] != 0xF3 {
			t.Fatalf("floor rune %U starts with %#x, which IndexFloor skips", r, buf[0])
		}
	}
}

func TestIndexFloor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		at   int
		code string
	}{
		{"", -1, ""},
		{"plain ascii text, long enough for the word loop", -1, ""},
		{"abc\u200bdef", 3, "unicode.zero-width"},
		{"0123456789abcdef\u202e", 16, "unicode.bidi-control"},
		{"é ü ✓ \u2060 \u200e", -1, ""}, // non-floor non-ASCII and shipped extras
		{"x\U000E0041", 1, "unicode.tag"},
		{"\xe2\x80", -1, ""}, // truncated sequence
		{"\xef\xbb\xbf", 0, "unicode.zero-width"},
		{"a\ufe0f", 1, "unicode.variation-selector"},
		{"\ufffa!", 0, "unicode.interlinear-annotation"},
	} {
		at, code := IndexFloor([]byte(tc.in))
		if at != tc.at || code != tc.code {
			t.Errorf("IndexFloor(%+q) = %d %q, want %d %q", tc.in, at, code, tc.at, tc.code)
		}
	}
}

// FuzzIndexFloor: IndexFloor finds the first floor rune a rune-by-rune decode finds.
func FuzzIndexFloor(f *testing.F) {
	f.Add([]byte("abc\u200bdef"))
	f.Add([]byte("\xf3\xa0\x80\x81\xe2\x80"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantCode := -1, ""
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			if c, ok := FloorCode(r); ok && n > 1 {
				want, wantCode = i, c
				break
			}
			i += n
		}
		if at, code := IndexFloor(b); at != want || code != wantCode {
			t.Fatalf("IndexFloor = %d %q, decode loop = %d %q", at, code, want, wantCode)
		}
	})
}

// IndexStripped finds exactly the runes the Unicode safety step strips: the first rune
// stripUnsafe removes or replaces, CR and invalid UTF-8 aside.
func FuzzIndexStripped(f *testing.F) {
	f.Add([]byte("plain\ttext\n"))
	f.Add([]byte("a\x00b"))
	f.Add([]byte("\x1b[31mred"))
	f.Add([]byte("x\u200ey\u2060z\u00ad"))
	f.Add([]byte("\r\n\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := -1
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			if n == 1 && r < utf8.RuneSelf && asciiNeedsWork[b[i]] && b[i] != '\r' || n > 1 && classifyRune(r) != 0xff {
				want = i
				break
			}
			i += n
		}
		at, code := IndexStripped(b)
		if at != want {
			t.Fatalf("IndexStripped = %d, decode loop = %d", at, want)
		}
		if at >= 0 && code == "" {
			t.Fatalf("no code for the rune at %d", at)
		}
		// Nothing IndexStripped reports survives the filter's own Unicode safety step.
		var c counts
		if out := unicodeSafety(b, &c); func() bool { i, _ := IndexStripped(out); return i >= 0 }() {
			t.Fatalf("the Unicode safety step leaves a rune IndexStripped reports: %q", out)
		}
	})
}

// The pipeline's own output never holds a rune IndexStripped reports (so verify's check of
// this filter version's trees cannot reject what the filter emits), on every role.
func TestFilterOutputHasNothingStripped(t *testing.T) {
	p := New(nil)
	for _, in := range []string{
		"plain", "a\x00b\x01c\x7f\u0085d", "\x1b]0;title\x07x\x1b[31mred\x1b[0m", "\u200e\u200f\u061c\u2060\u00ad\ufeffx",
		"\U000E0041\u202e\u2066\ufe0f\ufffa", "ｆｕｌｌ　ｗｉｄｔｈ", "e\u0301\u0308", "\u2474\u33a1\ufb01", "line\r\nline\rline\n",
	} {
		for _, role := range []Role{RoleBody, RoleLog, RoleDisplay} {
			res, err := p.Apply(context.Background(), []byte(in), Options{Role: role})
			if err != nil {
				t.Fatal(err)
			}
			if at, code := IndexStripped(res.Output); at >= 0 {
				t.Errorf("%s output of %+q holds %s at %d: %+q", role, in, code, at, res.Output)
			}
		}
	}
}

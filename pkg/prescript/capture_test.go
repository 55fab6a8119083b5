package prescript

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestErrorAnnotation(t *testing.T) {
	for _, c := range []struct {
		line, msg string
		ok        bool
	}{
		{"::error::plain", "plain", true},
		{"::error title=T,file=f.sh,line=1::with params", "with params", true},
		{"  \t::error::indented", "indented", true},
		{"::ERROR::any case", "any case", true},
		{"##[error]legacy", "legacy", true},
		{"##[error title=x]legacy params", "legacy params", true},
		{"::error::a%0Ab%25c%0Dd", "a\nb%c\rd", true},
		{"::error::", "", true},
		{"::warning::not an error", "", false},
		{"::errors::not a command", "", false},
		{"::error no terminator", "", false},
		{"say ::error::not at line start", "", false},
		{"##[warning]no", "", false},
		{"::err", "", false},
	} {
		msg, ok := errorAnnotation(c.line)
		if ok != c.ok || msg != c.msg {
			t.Errorf("errorAnnotation(%q) = %q, %v; want %q, %v", c.line, msg, ok, c.msg, c.ok)
		}
	}
}

func TestSanitizeStripsControlCharacters(t *testing.T) {
	in := "\x00a\x01\tb\x1f\x7fc\r\n é\u200b "
	if got, want := sanitize(in), "abc é\u200b"; got != want {
		t.Fatalf("sanitize = %q, want %q", got, want)
	}
}

func TestCapBytesUTF8Boundary(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"},                         // é is 2 bytes; cutting at 2 would split it
		{"aé", 3, "aé"},                        // fits exactly
		{"a😀b", 4, "a"},                        // 4-byte rune straddles
		{"a😀b", 5, "a😀"},                       // fits
		{"a\x80\x80\x80\x80b", 3, "a\x80\x80"}, // stray continuation bytes: cut anywhere
	} {
		got := capBytes(c.in, c.n)
		if got != c.want {
			t.Errorf("capBytes(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	s := strings.Repeat("é", 1000)
	for n := 0; n <= len(s); n++ {
		got := capBytes(s, n)
		if len(got) > n || !utf8.ValidString(got) || len(got) < n-1 {
			t.Fatalf("capBytes(é×1000, %d) = %d bytes, valid %v", n, len(got), utf8.ValidString(got))
		}
	}
}

func TestTrimPartialRune(t *testing.T) {
	for in, want := range map[string]string{"ab": "ab", "a\xc3": "a", "a\xf0\x9f\x98": "a", "aé": "aé", "": ""} {
		if got := trimPartialRune(in); got != want {
			t.Errorf("trimPartialRune(%q) = %q, want %q", in, got, want)
		}
	}
}

// The capture keeps at most limit bytes per line and of annotations, however much is written,
// including lines longer than any buffer, split across writes at arbitrary points.
func TestCaptureIsBounded(t *testing.T) {
	c := newCapture(nil, nil)
	long := strings.Repeat("x", 10*c.limit)
	for i := 0; i < 200; i++ {
		c.Write([]byte("::error::" + long[:i*7%len(long)]))
		c.Write([]byte(long))
		c.Write([]byte("\n"))
		if len(c.cur) != 0 || cap(c.cur) > 2*c.limit {
			t.Fatalf("line buffer grew to len %d cap %d", len(c.cur), cap(c.cur))
		}
	}
	c.Write([]byte("last line without newline"))
	c.close()
	if c.annBytes > c.limit+len(AnnotationSeparator)+c.limit || c.annDropped == 0 {
		t.Fatalf("annotations kept %d bytes, dropped %d", c.annBytes, c.annDropped)
	}
	for _, a := range c.annotations {
		if len(a) > c.limit {
			t.Fatalf("annotation of %d bytes kept", len(a))
		}
	}
	if c.lastNonEmpty() != "last line without newline" || c.lines != 201 {
		t.Fatalf("last %q lines %d", c.lastNonEmpty(), c.lines)
	}
}

// Lines split across writes are reassembled.
func TestCaptureSplitWrites(t *testing.T) {
	c := newCapture(nil, nil)
	for _, p := range []string{"::er", "ror::hel", "lo\nsecond", " line\n", "\n"} {
		c.Write([]byte(p))
	}
	c.close()
	if len(c.annotations) != 1 || c.annotations[0] != "hello" || c.lastNonEmpty() != "second line" {
		t.Fatalf("%+v", c)
	}
}

// A line indented past the window still yields its text: leading blanks never fill the window.
func TestCaptureDropsLeadingBlanksBeforeTheWindow(t *testing.T) {
	c := newCapture(nil, nil)
	c.Write([]byte("real one\n"))
	c.Write([]byte(strings.Repeat(" \t", 2*c.limit)))
	c.Write([]byte("  ::error::indented far\n"))
	c.close()
	if c.lastNonEmpty() != "::error::indented far" || len(c.annotations) != 1 || c.annotations[0] != "indented far" {
		t.Fatalf("last %q annotations %q", c.lastNonEmpty(), c.annotations)
	}
}

// A long literal secret widens the per-line window so redaction sees it whole before the cap.
func TestCaptureMarginCoversLongSecrets(t *testing.T) {
	secret := strings.Repeat("s", 3000)
	if c := newCapture(nil, []string{secret}); c.limit < MaxTextBytes+len(secret) {
		t.Fatalf("limit %d does not cover a %d-byte secret", c.limit, len(secret))
	}
}

func BenchmarkCapture(b *testing.B) {
	chunk := []byte(strings.Repeat("some chatty build output line\n", 2000))
	c := newCapture(nil, nil)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Write(chunk)
	}
}

func BenchmarkParse(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < MaxFileSize-64 {
		sb.WriteString("myagent_key_")
		sb.WriteString(strings.Repeat("k", sb.Len()%13))
		sb.WriteString("=some value with = and # inside\n")
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(strings.NewReader(in)); err != nil {
			b.Fatal(err)
		}
	}
}

package canon

import (
	"errors"
	"strings"
	"testing"
)

// Stable records and mutable state: the spec's worked example must reproduce exactly.
func TestRecordKeyReproducesSpecExample(t *testing.T) {
	got := RecordKey("github", "github.com", "R_kgDOExample", "comment", "IC_kwDOExample")
	const want = "c73645a72a9c5de28d71e3e1efe235b9a5d02ee6dfe7dc0ef06cf3d0e5ee3421"
	if got != want {
		t.Fatalf("RecordKey = %s, want %s", got, want)
	}
	// The input is the four fields joined by exactly one U+0000 and no trailing U+0000.
	if h := SHA256Hex([]byte("github://github.com\x00R_kgDOExample\x00comment\x00IC_kwDOExample")); h != want {
		t.Fatalf("byte-sequence digest %s differs from the spec key", h)
	}
}

func TestRecordKeyFieldsAreSeparated(t *testing.T) {
	// Moving a byte across a field boundary must change the key (the U+0000 separators).
	a := RecordKey("github", "github.com", "R_a", "comment", "bX")
	b := RecordKey("github", "github.com", "R_ab", "comment", "X")
	if a == b {
		t.Fatal("keys collide across a field boundary")
	}
}

// Canonical bytes: every JSON timestamp is UTC with exactly nine fractional digits.
func TestTimestampNormalisesEveryRFC3339SpellingToNineDigitUTC(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2026-09-08T10:15:30Z", "2026-09-08T10:15:30.000000000Z"},
		{"2026-09-08T10:15:30.5Z", "2026-09-08T10:15:30.500000000Z"},
		{"2026-09-08T12:15:30.123456789+02:00", "2026-09-08T10:15:30.123456789Z"},
		{"2026-09-08t10:15:30z", "2026-09-08T10:15:30.000000000Z"},
		{"2026-09-08T00:15:30-01:30", "2026-09-08T01:45:30.000000000Z"},
		{"2026-09-08T10:15:30.000000000Z", "2026-09-08T10:15:30.000000000Z"},
	} {
		got, err := Timestamp(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Timestamp(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestTimestampRejectsNonRFC3339(t *testing.T) {
	for _, in := range []string{"", "2026-09-08", "2026-09-08 10:15:30Z", "2026-09-08T10:15:30",
		"2026-09-08T10:15:30.Z", "2026-09-08T10:15:30.1234567891Z", "2026-13-08T10:15:30Z",
		"2026-09-08T23:59:60Z", "yesterday", "2026-09-08T10:15:30+0200"} {
		if got, err := Timestamp(in); err == nil || !errors.Is(err, errTimestamp) {
			t.Errorf("Timestamp(%q) = %q, %v; want ErrTimestamp", in, got, err)
		}
	}
}

// Ordering files: <order-key> is YYYYMMDDTHHMMSSnnnnnnnnnZ; the entity key sorts first.
func TestOrderKeyFormAndReservedEntityKeySortsFirst(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2026-09-08T10:15:30Z", "20260908T101530000000000Z"},
		{"2026-09-08T12:15:30.000000042+02:00", "20260908T101530000000042Z"},
		{"0001-01-01T00:00:00Z", "00010101T000000000000000Z"},
	} {
		got, err := OrderKey(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("OrderKey(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if len(got) != len(EntityOrderKey) || !(EntityOrderKey < got) {
			t.Errorf("reserved entity key does not sort before %q", got)
		}
	}
	if len(EntityOrderKey) != 25 || strings.Trim(EntityOrderKey, "0TZ") != "" {
		t.Fatalf("reserved entity key %q malformed", EntityOrderKey)
	}
	// Order keys sort like the instants they encode.
	a, _ := OrderKey("2026-09-08T10:15:30.1Z")
	b, _ := OrderKey("2026-09-08T10:15:30.09Z")
	if !(b < a) {
		t.Fatalf("order keys %s and %s do not sort chronologically", b, a)
	}
}

// Canonical bytes: RFC 8785, no BOM, no trailing newline, member order by UTF-16 code units.
func TestJSONIsRFC8785WithoutBOMOrTrailingNewline(t *testing.T) {
	v := map[string]any{"b": 1, "a": "x<y>&z", "\u00e9": []int{}, "c": 1.5e3, "d": nil}
	got, err := JSON(v)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"a":"x<y>&z","b":1,"c":1500,"d":null,"é":[]}`
	if string(got) != want {
		t.Fatalf("JSON = %s, want %s", got, want)
	}
	if s, _ := String("tab\there \u2028"); s != "\"tab\\there \u2028\"" {
		t.Fatalf("String escaping: %q", s)
	}
	if _, err := Transform([]byte(`{"a":1,"a":2}`)); err == nil {
		t.Fatal("duplicate member accepted")
	}
}

// source.host: lowercase DNS name, :port only when not 443, port 1-65535, no scheme or path.
func TestHostNormalisation(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"github.com", "github.com"},
		{"GitHub.COM", "github.com"},
		{"https://GitHub.com/owner/repo", "github.com"},
		{"https://gitlab.example.org:443/api/v4", "gitlab.example.org"},
		{"https://git.example.org:8443/api/v1?x=1", "git.example.org:8443"},
		{"http://127.0.0.1:34567", "127.0.0.1:34567"},
		{"codeberg.org:1", "codeberg.org:1"},
		{"codeberg.org:65535", "codeberg.org:65535"},
		{"https://user:pw@forge.example", "forge.example"},
		{"http://forge.example/api", "forge.example:80"},
		{"http://forge.example:443", "forge.example"},
	} {
		got, err := Host(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Host(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "github.com:443", "github.com:0", "github.com:65536", "github.com:080",
		"github.com:", "ftp://github.com", "https://[::1]:8443", "git hub.com", "github..com", ".github.com",
		"github.com/", "gïthub.com", "https://:8443", "github.com:x"} {
		if got, err := Host(in); err == nil || !errors.Is(err, errHost) {
			t.Errorf("Host(%q) = %q, %v; want ErrHost", in, got, err)
		}
	}
	if !IsCanonicalHost("github.com") || IsCanonicalHost("GitHub.com") || IsCanonicalHost("https://github.com") {
		t.Fatal("IsCanonicalHost disagrees with Host")
	}
}

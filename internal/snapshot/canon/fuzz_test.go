package canon

import (
	"regexp"
	"testing"
)

var (
	hostPattern = regexp.MustCompile(`^[a-z0-9.-]+(:([1-9]|[1-9][0-9]{1,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$`)
	tsPattern   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z$`)
)

// FuzzHost: whatever an adapter passes, an accepted host is canonical (matches the index
// schema's source.host pattern, never ends in :443) and normalising it again is a no-op.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"github.com", "https://GitHub.com:443/x", "http://127.0.0.1:8080", "git.example:65535", "a:443", "[::1]", "h:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Host(s)
		if err != nil {
			return
		}
		if !hostPattern.MatchString(h) || regexp.MustCompile(`:443$`).MatchString(h) {
			t.Fatalf("Host(%q) = %q is not a canonical source.host", s, h)
		}
		if again, err := Host(h); err != nil || again != h || !IsCanonicalHost(h) {
			t.Fatalf("Host(%q) = %q is not stable: %q, %v", s, h, again, err)
		}
	})
}

// FuzzTimestamp: an accepted timestamp becomes the nine-digit UTC form, which is itself
// accepted unchanged, and its order key has the filename form.
func FuzzTimestamp(f *testing.F) {
	for _, s := range []string{"2026-09-08T10:15:30Z", "2026-09-08T12:15:30.123+02:00", "2026-09-08t10:15:30z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999-23:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Timestamp(s)
		if err != nil {
			return
		}
		if !tsPattern.MatchString(c) {
			t.Fatalf("Timestamp(%q) = %q", s, c)
		}
		if again, err := Timestamp(c); err != nil || again != c {
			t.Fatalf("Timestamp(%q) = %q is not stable: %q, %v", s, c, again, err)
		}
		if k, err := OrderKey(c); err != nil || len(k) != len(EntityOrderKey) || k <= EntityOrderKey {
			t.Fatalf("OrderKey(%q) = %q, %v", c, k, err)
		}
	})
}

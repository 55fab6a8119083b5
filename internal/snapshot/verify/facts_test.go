package verify

import (
	"bytes"
	"crypto/sha256"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

// The text and header verdicts from textFacts equal the byte-level formulas Load used before
// (copied here as the reference) on every short string over an alphabet of the bytes that
// matter, and on random longer ones.
func TestTextFactsMatchTheByteRules(t *testing.T) {
	ref := func(b []byte) (enc, trail bool, parts []string, bodyBad bool) {
		enc = !utf8.Valid(b) || bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) || bytes.IndexByte(b, '\r') >= 0
		trail = len(b) > 0 && (!bytes.HasSuffix(b, []byte("\n")) || bytes.HasSuffix(b, []byte("\n\n")))
		rest := b
		for range 5 {
			nl := bytes.IndexByte(rest, '\n')
			if nl < 0 {
				return enc, trail, parts, false
			}
			parts, rest = append(parts, string(rest[:nl])), rest[nl+1:]
		}
		bodyBad = len(rest) > 0 && (!bytes.HasSuffix(rest, []byte("\n")) || bytes.HasSuffix(rest, []byte("\n\n")))
		return enc, trail, parts, bodyBad
	}
	try := func(b []byte) {
		t.Helper()
		for _, bounded := range []bool{false, true} {
			f := textFactsOf(b, bounded)
			enc, trail, parts, bodyBad := ref(b)
			if got := !f.valid || f.bom || f.cr; got != enc {
				t.Fatalf("%q: encoding verdict %v, want %v", b, got, enc)
			}
			if got := f.size > 0 && !f.endsOneLF(f.size); got != trail {
				t.Fatalf("%q: trailing-LF verdict %v, want %v", b, got, trail)
			}
			if (f.nLines == 5) != (len(parts) == 5) {
				t.Fatalf("%q: %d header lines, want %d", b, f.nLines, len(parts))
			}
			if f.nLines == 5 && !f.partial {
				if strings.Join(f.lines[:], "\x00") != strings.Join(parts, "\x00") {
					t.Fatalf("%q: lines %q, want %q", b, f.lines, parts)
				}
				if got := f.size-f.headLen > 0 && !f.endsOneLF(f.size-f.headLen); got != bodyBad {
					t.Fatalf("%q: body verdict %v, want %v", b, got, bodyBad)
				}
			}
		}
	}
	alphabet := []byte{'\n', 'a', '\r', 0xef, 0xbb, 0xbf, 0xff}
	var gen func(prefix []byte, n int)
	gen = func(prefix []byte, n int) {
		try(prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(append(prefix[:len(prefix):len(prefix)], c), n-1)
		}
	}
	gen(nil, 7)
	rng := rand.New(rand.NewSource(1))
	for range 20000 {
		b := make([]byte, rng.Intn(40))
		for i := range b {
			b[i] = alphabet[rng.Intn(2)] // mostly LF and 'a': many line layouts
		}
		try(b)
	}
	long := []byte(strings.Repeat("a", maxFactsHead) + "\n\n\n\n\nbody\n")
	if f := textFactsOf(long, true); !f.partial || f.nLines != 5 {
		t.Fatalf("a %d-byte header is kept in a summary", len(long))
	}
	try(long)
}

// A file read again (a summarized file Check needs whole, a file a snapshot from Open serves)
// is used only when it is exactly the file verified: changed, grown or shrunk bytes, a symlink,
// a hard link or a FIFO in its place, a directory on its path swapped for a symlink to a copy,
// or a missing file are refused with the reason (and a FIFO does not block).
func TestRereadVerifiedOnlyReturnsTheBytesFirstRead(t *testing.T) {
	dir := t.TempDir()
	p := "records/a.md"
	orig := []byte("body\n")
	reset := func() {
		os.RemoveAll(filepath.Join(dir, "records"))
		if err := os.Mkdir(filepath.Join(dir, "records"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), orig, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reset()
	sum, size := sha256.Sum256(orig), int64(len(orig))
	if b, why := rereadVerified(dir, p, size, sum); why != "" || !bytes.Equal(b, orig) {
		t.Fatalf("unchanged file: %q %q", b, why)
	}
	copyDir := filepath.Join(dir, "copy")
	if err := os.MkdirAll(copyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(copyDir, "a.md"), orig, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, swap := range map[string]func(full string) error{
		"same size, other bytes": func(full string) error { return os.WriteFile(full, []byte("Body\n"), 0o600) },
		"grown":                  func(full string) error { return os.WriteFile(full, append(orig, 'x'), 0o600) },
		"shrunk":                 func(full string) error { return os.WriteFile(full, orig[:2], 0o600) },
		"missing":                func(full string) error { return os.Remove(full) },
		"symlink to the same bytes": func(full string) error {
			os.Remove(full)
			return os.Symlink(filepath.Join(copyDir, "a.md"), full)
		},
		"hard link": func(full string) error { return os.Link(full, filepath.Join(dir, "records", "b.md")) },
		"directory swapped for a symlink to a copy": func(string) error {
			os.RemoveAll(filepath.Join(dir, "records"))
			return os.Symlink(copyDir, filepath.Join(dir, "records"))
		},
		"fifo": func(full string) error { os.Remove(full); return syscall.Mkfifo(full, 0o600) },
	} {
		reset()
		if err := swap(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
		if b, why := rereadVerified(dir, p, size, sum); why == "" || b != nil {
			t.Errorf("%s: reread returned %q", name, b)
		}
	}
	reset()
	for _, bad := range []string{"../a.md", "records//a.md", "./records/a.md", ""} {
		if _, why := rereadVerified(dir, bad, size, sum); why != "not a tree path" {
			t.Errorf("%q: %q", bad, why)
		}
	}
}

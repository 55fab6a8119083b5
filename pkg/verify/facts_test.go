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

// A summarized file read again is used only when it is exactly the file first read: changed
// bytes, a symlink or a FIFO in its place are refused (and a FIFO does not block).
func TestRereadFileOnlyReturnsTheBytesFirstRead(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "records"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := "records/a.md"
	orig := []byte("body\n")
	if err := os.WriteFile(filepath.Join(dir, p), orig, 0o600); err != nil {
		t.Fatal(err)
	}
	want := fileData{sum: sha256.Sum256(orig), size: int64(len(orig))}
	if b, ok := rereadFile(dir, p, want); !ok || !bytes.Equal(b, orig) {
		t.Fatalf("unchanged file: %q %v", b, ok)
	}
	for name, swap := range map[string]func(full string) error{
		"same size, other bytes": func(full string) error { return os.WriteFile(full, []byte("Body\n"), 0o600) },
		"grown":                  func(full string) error { return os.WriteFile(full, append(orig, 'x'), 0o600) },
		"symlink to the same bytes": func(full string) error {
			other := filepath.Join(dir, "same")
			if err := os.WriteFile(other, orig, 0o600); err != nil {
				return err
			}
			os.Remove(full)
			return os.Symlink(other, full)
		},
		"fifo": func(full string) error { os.Remove(full); return syscall.Mkfifo(full, 0o600) },
	} {
		full := filepath.Join(dir, p)
		os.Remove(full)
		if err := swap(full); err != nil {
			t.Fatal(err)
		}
		if b, ok := rereadFile(dir, p, want); ok {
			t.Errorf("%s: reread returned %q", name, b)
		}
	}
}

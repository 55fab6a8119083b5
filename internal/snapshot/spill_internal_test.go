package snapshot

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// The background writer writes every queued file in order and reports the first write
// failure at flush (naming the path, never the content), at every later flush too.
func TestSpillWriterWritesInOrderAndReportsFailure(t *testing.T) {
	dir := t.TempDir()
	tw, err := treefs.OpenWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	a := &asm{out: newSpillWriter(tw)}
	var paths []string
	for i := 0; i < 3*spillQueue; i++ {
		p := filepath.ToSlash(filepath.Join("records", strings.Repeat("a", 1+i%7), string(rune('a'+i%26))+"-"+strconv.Itoa(i)+".md"))
		data := []byte("body " + strconv.Itoa(i) + "\n")
		f := a.spill(p, data, sha256.Sum256(data))
		if !f.spilled || f.Data != nil || f.size != len(data) {
			t.Fatalf("%s was not handed to the writer", p)
		}
		paths = append(paths, p)
	}
	if err := a.out.flush(); err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil || string(b) != "body "+strconv.Itoa(i)+"\n" {
			t.Fatalf("%s: %q, %v", p, b, err)
		}
	}
	// A file the schema covers is never spilled.
	if f := a.spill("index.json", []byte("{}"), sha256.Sum256([]byte("{}"))); f.spilled {
		t.Fatal("a JSON document was spilled")
	}

	// A directory that vanished under the writer: the first failure is reported at flush.
	gone := t.TempDir()
	tw2, err := treefs.OpenWriter(gone)
	if err != nil {
		t.Fatal(err)
	}
	defer tw2.Close()
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	b := &asm{out: newSpillWriter(tw2)}
	secret := []byte("do-not-echo-this-body\n")
	b.spill("records/x.md", secret, sha256.Sum256(secret))
	err = b.out.flush()
	if err == nil || !strings.Contains(err.Error(), "records") || strings.Contains(err.Error(), "do-not-echo") {
		t.Fatalf("flush after a failed write: %v", err)
	}
	if b.out.flush() == nil {
		t.Fatal("a second flush forgot the failure")
	}
}

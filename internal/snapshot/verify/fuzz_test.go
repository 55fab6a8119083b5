package verify

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// FuzzRecordFile feeds arbitrary record-file bytes to the header/body checks: they must never
// panic, and a file that passes must have the exact four-line header of its manifest record.
func FuzzRecordFile(f *testing.F) {
	f.Add([]byte("Fullsend-Record: \"comment\"\nSource-ID: \"IC_1\"\nAuthor-ID: \"U_1\"\nCreated-At: \"2026-09-01T10:12:00.000000000Z\"\n\nbody\n"))
	f.Add([]byte("Fullsend-Record: \"comment\"\nSource-ID: \"IC_1\"\nAuthor-ID: null\nCreated-At: \"2026-09-01T10:12:00.000000000Z\"\n\n"))
	f.Add([]byte("Fullsend-Record: \"comment\"\n"))
	f.Add([]byte{})
	author := "U_1"
	rec := ManifestRecord{Kind: "comment", ID: "IC_1", RecordKey: "k", ContentPath: "records/x.md", AuthorID: &author, CreatedAt: "2026-09-01T10:12:00.000000000Z"}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &checker{files: map[string][]byte{rec.ContentPath: b}, sums: treefs.Sums{rec.ContentPath: sha256.Sum256(b)},
			byPath: map[string]*ManifestFile{rec.ContentPath: {Path: rec.ContentPath, Role: "comment_record"}}}
		c.recordFile(rec)
		if len(c.viol) == 0 {
			const head = "Fullsend-Record: \"comment\"\nSource-ID: \"IC_1\"\nAuthor-ID: \"U_1\"\nCreated-At: \"2026-09-01T10:12:00.000000000Z\"\n\n"
			if len(b) < len(head) || string(b[:len(head)]) != head {
				t.Fatalf("accepted a record without its exact header: %q", b)
			}
		}
	})
}

// FuzzOrderFile: order parsing never panics and never returns a line that is not an emitted
// record path, or the same path twice.
func FuzzOrderFile(f *testing.F) {
	f.Add([]byte("records/a.md\nrecords/b.md\n"))
	f.Add([]byte("records/a.md\nrecords/a.md\n"))
	f.Add([]byte("records/a.md"))
	f.Add([]byte("\n\n"))
	content := map[string]ManifestRecord{"records/a.md": {}, "records/b.md": {}}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &checker{files: map[string][]byte{"views/timeline.order": b}}
		lines := c.parseOrder("views/timeline.order", content)
		seen := map[string]bool{}
		for _, l := range lines {
			if _, ok := content[l]; !ok || seen[l] {
				t.Fatalf("returned %q", l)
			}
			seen[l] = true
		}
	})
}

// FuzzIndex: any index.json bytes in an otherwise empty tree give a report, never a panic, and
// never a passing verification.
func FuzzIndex(f *testing.F) {
	f.Add([]byte(`{"schema_version":1,"filter_version":"` + filter.Version + `","files":[],"records":[],"gaps":[]}`))
	f.Add([]byte(`{"schema_version":2}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"schema_version":1,"filter_version":"` + filter.Version + `","files":[{"path":"collection.json"}]}`))
	bundle, err := schema.Project()
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, "index.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		snap, rep, err := LoadChecked(t, context.Background(), dir, Options{Bundle: bundle})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() || snap != nil {
			t.Fatal("a tree with only index.json verified")
		}
	})
}

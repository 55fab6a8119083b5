package snapshot

import (
	"errors"
	"fmt"
	"testing"

	"github.com/forgectx/forgectx/pkg/canon"
	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/pkg/snapshot/schema"
)

func sampleIndex(n int) indexJSON {
	idx := indexJSON{
		SchemaVersion: SchemaVersion, FilterVersion: filter.Version, CollectionProfile: canon.SHA256Hex(nil),
		Filter: filterJSON{Status: filter.StatusUnchanged, Findings: []filter.Finding{}},
		Source: sourceJSON{Forge: "github", Host: "github.com", RepositoryID: "R_1", Repository: "o/r"},
		Entity: indexEntityJSON{Kind: "change_proposal", ID: "PR_1"}, Gaps: []Gap{},
	}
	author := "U_1"
	for i := 0; i < n; i++ {
		key := canon.SHA256Hex([]byte(fmt.Sprint(i)))
		path := "records/20260101T000000000000000Z-" + key + ".md"
		idx.Files = append(idx.Files, fileJSON{Path: path, Role: "comment_record", MediaType: mediaMarkdown, Bytes: 1, SHA256: key})
		idx.Records = append(idx.Records, recordJSON{Kind: "comment", ID: fmt.Sprintf("IC_%d", i), RecordKey: key, ContentPath: path,
			AuthorID: &author, CreatedAt: "2026-01-01T00:00:00.000000000Z", Filter: filterJSON{Status: filter.StatusUnchanged, Findings: []filter.Finding{}}})
	}
	return idx
}

// Every emitted JSON document is validated before the tree is published; a validation failure
// aborts — also when the offending item sits in a later validation chunk of a large index.
func TestIndexValidationFailureAbortsInAnyChunk(t *testing.T) {
	b, err := schema.Project()
	if err != nil {
		t.Fatal(err)
	}
	n := indexChunk*2 + 7
	good := sampleIndex(n)
	out, err := buildIndex(good, b)
	if err != nil {
		t.Fatalf("valid index rejected: %v", err)
	}
	// Piecewise canonical bytes equal JCS over the whole document.
	whole, err := canon.JSON(good)
	if err != nil || string(whole) != string(out) {
		t.Fatal("piecewise index bytes differ from RFC 8785 over the whole document")
	}
	for _, at := range []int{0, indexChunk + 3, n - 1} {
		bad := sampleIndex(n)
		r := bad.Records[at].(recordJSON)
		r.ID = "IC:not-a-node-id" // structural, but outside the GitHub mapping
		bad.Records[at] = r
		_, err := buildIndex(bad, b)
		var ab *AbortError
		if !errors.As(err, &ab) || ab.Code != AbortSchemaInvalid || !errors.Is(err, schema.ErrInvalid) {
			t.Errorf("invalid record %d: %v, want a schema_invalid abort", at, err)
		}
		badFile := sampleIndex(n)
		badFile.Files[at].MediaType = "text/plain; charset=utf-8"
		if _, err := buildIndex(badFile, b); !errors.As(err, &ab) {
			t.Errorf("invalid file entry %d accepted", at)
		}
	}
	empty := sampleIndex(0)
	empty.Files, empty.Records = []fileJSON{}, []any{}
	if _, err := buildIndex(empty, b); err != nil {
		t.Fatalf("empty arrays: %v", err)
	}
}

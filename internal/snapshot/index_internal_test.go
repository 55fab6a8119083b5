package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
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
	if cap(out) != len(out) {
		t.Errorf("index buffer %d bytes with capacity %d: the measured size is wrong", len(out), cap(out))
	}
	for _, at := range []int{0, indexChunk + 3, n - 1} {
		bad := sampleIndex(n)
		r := bad.Records[at].(recordJSON)
		r.ID = "IC:not-a-node-id" // structural, but outside the GitHub mapping
		bad.Records[at] = r
		_, err := buildIndex(bad, b)
		var ab *AbortError
		if !errors.As(err, &ab) || ab.Code != abortSchemaInvalid || !errors.Is(err, schema.ErrInvalid) {
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

// Canonical bytes: the direct encoders of index.json items produce exactly what RFC 8785 (JCS
// over encoding/json) produces, for every field shape — escapes, control characters, non-ASCII,
// invalid UTF-8, null and absent optional members, findings.
func TestDirectIndexEncodersEqualJCS(t *testing.T) {
	strs := []string{"", "alice", `q"uote`, `back\slash`, "tab\tnl\nctl\x01\x1f\x7f", "ünï\u2028\u2029😀", "bad\xffutf8", "<&>", "/slash"}
	finds := [][]filter.Finding{{}, {{Code: "a.b", Count: 1}, {Code: "redact.github-token", Count: 1 << 40}}}
	var items []any
	for i, s := range strs {
		str := s
		f := filterJSON{Status: filter.StatusModified, Findings: finds[i%2]}
		items = append(items,
			fileJSON{Path: s, Role: s, MediaType: s, Bytes: i * 1000, SHA256: s},
			fileJSON{Path: s, Role: "r", MediaType: "m", Bytes: 0, SHA256: "x", Filter: &f},
			recordJSON{Kind: s, ID: s, RecordKey: s, AuthorID: &str, Author: &str, CreatedAt: s, Filter: f},
			recordJSON{Kind: "k", ID: "i", RecordKey: "r", ContentPath: s, CreatedAt: "c", UpdatedAt: s, Filter: f},
			recordJSON{Kind: "k", ID: "i", RecordKey: "r", ContentPath: "p", CreatedAt: "c", UpdatedAt: "u", Filter: f},
			checkRecordJSON{Kind: s, ID: s, RecordKey: s, CreatedAt: s, Filter: f},
			checkRecordJSON{Kind: "check", ID: "i", RecordKey: "r", MetadataPath: s + "m", LogPath: s + "l", CreatedAt: "c", Filter: f},
		)
	}
	equalJCS(t, items, func(it any) ([]byte, error) {
		switch v := it.(type) {
		case fileJSON:
			return v.appendCanonical(nil), nil
		case recordJSON:
			return v.appendCanonical(nil), nil
		case checkRecordJSON:
			return v.appendCanonical(nil), nil
		}
		return nil, fmt.Errorf("no direct encoder for %T", it)
	})
}

// equalJCS checks that enc writes each item exactly as canon.JSON (RFC 8785 over
// encoding/json) does.
func equalJCS(t *testing.T, items []any, enc func(any) ([]byte, error)) {
	t.Helper()
	for i, it := range items {
		want, err := canon.JSON(it)
		if err != nil {
			t.Fatal(err)
		}
		got, err := enc(it)
		if err != nil || string(got) != string(want) {
			t.Errorf("item %d (%T): %v\n got %s\nwant %s", i, it, err, got, want)
		}
	}
}

// relations/reviews.json and state/threads.json are built item by item and validated in
// chunks: the bytes equal RFC 8785 over the whole document, and an invalid row in any chunk
// fails validation.
func TestArrayDocumentsEqualJCSAndValidateEveryChunk(t *testing.T) {
	b, err := schema.Project()
	if err != nil {
		t.Fatal(err)
	}
	mk := func(n, bad int) threadsJSON {
		var d threadsJSON
		for i := 0; i < n; i++ {
			st := threadStateJSON{ID: fmt.Sprintf("T_%d", i), ThreadKey: canon.SHA256Hex([]byte(fmt.Sprint(i))), Resolved: i%2 == 0, Outdated: i%3 == 0}
			if st.Resolved {
				st.ResolvedByActorID = nullable(nil)
			}
			if i == bad {
				st.ThreadKey = "not-a-key"
			}
			d.Threads = append(d.Threads, st)
		}
		if d.Threads == nil {
			d.Threads = []threadStateJSON{}
		}
		return d
	}
	for _, n := range []int{0, 1, indexChunk, indexChunk*2 + 5} {
		d := mk(n, -1)
		items := encodeItems(d.Threads, threadStateJSON.appendCanonical)
		got, err := arrayDocument(b, schema.Threads, []arrayMember{{"threads", items}})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		want, _ := canon.JSON(d)
		if string(got) != string(want) || cap(got) != len(got) {
			t.Fatalf("n=%d: chunked document differs from RFC 8785 over the whole (or is not exactly sized)", n)
		}
	}
	for _, at := range []int{0, indexChunk + 1, indexChunk*2 + 4} {
		items := encodeItems(mk(indexChunk*2+5, at).Threads, threadStateJSON.appendCanonical)
		if _, err := arrayDocument(b, schema.Threads, []arrayMember{{"threads", items}}); err == nil {
			t.Errorf("invalid row %d accepted", at)
		}
	}
}

// Relationships: reply edges must form a forest; the check is linear, so a hostile thread of a
// 200k-long reply chain (or one closing into a cycle at its end) costs no more than its size.
func TestReplyForestIsLinearAndFindsLongCycles(t *testing.T) {
	const n = 200000
	chain := make([]acquisition.Reply, n)
	for i := range chain {
		chain[i] = acquisition.Reply{ID: fmt.Sprint("c", i+1), ParentID: fmt.Sprint("c", i)}
	}
	if !replyForest(chain) {
		t.Fatal("a chain is a forest")
	}
	cyc := append(chain, acquisition.Reply{ID: "c0", ParentID: fmt.Sprint("c", n)})
	if replyForest(cyc) {
		t.Fatal("a chain closed into a cycle was accepted")
	}
}

// The relation rows' direct encoders write exactly RFC 8785 over encoding/json (canon.JSON, the
// form they replace): every optional member present and absent, nil and empty lists, null and
// string raw members (as nullable writes them), and strings that need escaping.
func TestDirectRelationEncodersEqualJCS(t *testing.T) {
	strs := []string{"", "alice", `q"uote`, `back\slash`, "tab\tnl\nctl\x01\x1f\x7f", "ünï\u2028\u2029😀", "bad\xffutf8", "<&>", "/slash"}
	yes, no := true, false
	var items []any
	for i, s := range strs {
		str := s
		raws := []json.RawMessage{nil, nullable(nil), nullable(&str)}
		raw := raws[i%len(raws)]
		items = append(items,
			reviewRelJSON{ID: s, RecordKey: s, State: s, SubmittedAt: s},
			reviewRelJSON{ID: "i", RecordKey: "k", State: "approved", ReviewedSHA: s + "sha", SubmittedAt: "t", DismissedAt: raw, DismissedByActorID: raws[(i+1)%len(raws)]},
			threadRelJSON{ID: s, ThreadKey: s, CreatedAt: s, OrderPath: s},
			threadRelJSON{ID: "i", ThreadKey: "k", CreatedAt: "c", OrderPath: "o", RecordKeys: []string{}, Replies: []replyJSON{}},
			threadRelJSON{ID: "i", ThreadKey: "k", CreatedAt: "c", OrderPath: "o", RecordKeys: []string{s, "b"},
				Replies:  []replyJSON{{RecordKey: s, ParentRecordKey: "p"}, {RecordKey: "r", ParentRecordKey: s}},
				ReviewID: s + "r", ReviewRecordKey: s + "k", ReviewedSHA: s + "h", Path: s + "p", Line: i + 1, Side: s + "s",
				StartLine: i * 2, OriginalLine: -i, OriginalStartLine: i * 3, OriginalSide: s + "o"},
			threadStateJSON{ID: s, ThreadKey: s},
			threadStateJSON{ID: "i", ThreadKey: s, Resolved: true, ResolvedByActorID: raw, Outdated: i%2 == 0, Minimized: &yes},
			threadStateJSON{ID: "i", ThreadKey: "k", Minimized: &no},
		)
	}
	equalJCS(t, items, func(it any) ([]byte, error) {
		switch v := it.(type) {
		case reviewRelJSON:
			return v.appendCanonical(nil), nil
		case threadRelJSON:
			return v.appendCanonical(nil), nil
		case threadStateJSON:
			return v.appendCanonical(nil), nil
		}
		return nil, fmt.Errorf("no direct encoder for %T", it)
	})
}

package reviewmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/verify"
	"github.com/forgectx/forgectx/test/verifytest"
)

// fetchAll reads one evidence item through the MCP session, following next_offset.
func (s *session) fetchAll(t *testing.T, id string) (content string, metadata json.RawMessage) {
	t.Helper()
	off := 0
	for pages := 0; pages < 1000; pages++ {
		text, isErr := s.call(t, ToolEvidence, fmt.Sprintf(`{"action":"get","id":%q,"offset":%d}`, id, off))
		if isErr {
			t.Fatalf("get %s: %s", id, text)
		}
		var page struct {
			Content  string          `json:"content"`
			Metadata json.RawMessage `json:"metadata"`
			Next     *int            `json:"next_offset"`
		}
		if err := json.Unmarshal([]byte(text), &page); err != nil {
			t.Fatal(err)
		}
		content += page.Content
		if page.Metadata != nil {
			metadata = page.Metadata
		}
		if page.Next == nil {
			return content, metadata
		}
		off = *page.Next
	}
	t.Fatalf("get %s does not end", id)
	return "", nil
}

// TestMCPEvidenceServesVerifiedSnapshot: for every golden snapshot (with and without gaps),
// the evidence tools serve exactly the verified tree: every manifest record's verified
// content and check metadata, every check log, every review thread, the actor state and
// collection documents, and the manifest's gaps unchanged; and coverage derives from those
// gaps: a kind whose scope has a gap is never absence-authoritative and names the gap's
// usability, a scope outside the collection profile is scope_not_selected.
func TestMCPEvidenceServesVerifiedSnapshot(t *testing.T) {
	trees := map[string]string{"demo": verifytest.Write(t, verifytest.Demo)}
	for _, g := range []string{"bounds-hit", "change-proposal", "empty-sources", "rejected-records", "work-item"} {
		trees[g] = copyGolden(t, g)
	}
	sawGap, gapChecks := false, 0
	for name, dir := range trees {
		t.Run(name, func(t *testing.T) {
			snap, _, err := verify.Load(context.Background(), dir, verify.Options{})
			if err != nil || snap == nil {
				t.Fatalf("fixture does not verify: %v", err)
			}
			s := mustStart(t, Config{Mode: ModeConstrained, SnapshotDir: dir})
			sum := s.ok(t, ToolEvidence, `{"action":"summary"}`)
			var gotGaps []verify.Gap
			b, _ := json.Marshal(sum["gaps"])
			if err := json.Unmarshal(b, &gotGaps); err != nil || len(gotGaps) != len(snap.Manifest.Gaps) || (len(gotGaps) > 0 && !slices.Equal(gotGaps, snap.Manifest.Gaps)) {
				t.Errorf("summary gaps %s, manifest %+v", b, snap.Manifest.Gaps)
			}
			sawGap = sawGap || len(snap.Manifest.Gaps) > 0
			if sum["index_sha256"] != snap.IndexSHA256 {
				t.Errorf("summary index digest %v", sum["index_sha256"])
			}
			for _, r := range snap.Manifest.Records {
				content, meta := s.fetchAll(t, "rec_"+r.RecordKey)
				if r.ContentPath != "" {
					if b, _ := snap.File(r.ContentPath); content != string(b) {
						t.Errorf("record %s: served content differs from the verified file", r.RecordKey)
					}
				}
				if r.MetadataPath != "" && r.Kind != kindReview {
					if b, _ := snap.File(r.MetadataPath); string(meta) != string(b) {
						t.Errorf("record %s: served metadata differs from the verified file", r.RecordKey)
					}
				}
				if r.LogPath != "" {
					if log, _ := s.fetchAll(t, "log_"+r.RecordKey); log != string(mustFile(t, snap, r.LogPath)) {
						t.Errorf("check log %s differs", r.RecordKey)
					}
				}
			}
			if b, ok := snap.File("relations/reviews.json"); ok {
				var rel relationsDoc
				if err := json.Unmarshal(b, &rel); err != nil {
					t.Fatal(err)
				}
				for _, th := range rel.Threads {
					var k keyed
					json.Unmarshal(th, &k)
					_, meta := s.fetchAll(t, "thr_"+k.ThreadKey)
					var m struct{ Relation json.RawMessage }
					if err := json.Unmarshal(meta, &m); err != nil || string(m.Relation) != string(th) {
						t.Errorf("thread %s: relation not served as verified", k.ThreadKey)
					}
				}
			}
			for id, p := range map[string]string{"doc_actors": "state/actors.json", "doc_collection": "collection.json", "doc_entity_metadata": "entity/metadata.json"} {
				if b, ok := snap.File(p); ok {
					if c, _ := s.fetchAll(t, id); c != string(b) {
						t.Errorf("%s differs from %s", id, p)
					}
				}
			}
			var col collectionDoc
			json.Unmarshal(mustFile(t, snap, "collection.json"), &col)
			for _, kind := range coverageKinds {
				scope := kindScope[kind]
				m := s.ok(t, toolEvidenceCoverage, fmt.Sprintf(`{"kind":%q,"scope":%q,"query":"zq-no-such-token-zq"}`, kind, scope))
				reasons := fmt.Sprint(m["reasons"])
				gapScopes := []string{scope}
				if kind == kindCheckLog {
					gapScopes = append(gapScopes, "checks")
				}
				for _, g := range snap.Manifest.Gaps {
					if !slices.Contains(gapScopes, g.Scope) || !slices.Contains(col.IncludedSources, scope) {
						continue
					}
					gapChecks++
					want := "partial_scope"
					if g.Usability == "unusable" {
						want = "unusable_scope"
					}
					if m["absence_authoritative"] != false || m["state"] != "unknown" || !strings.Contains(reasons, want) {
						t.Errorf("%s/%s with gap %+v: %v", kind, scope, g, m)
					}
				}
				if !slices.Contains(col.IncludedSources, scope) && (m["absence_authoritative"] != false || !strings.Contains(reasons, "scope_not_selected")) {
					t.Errorf("%s/%s not selected: %v", kind, scope, m)
				}
				if m["absence_authoritative"] == true && reasons != "[]" {
					t.Errorf("%s: authoritative with reasons %v", kind, reasons)
				}
			}
		})
	}
	if !sawGap || gapChecks < 5 {
		t.Errorf("fixtures exercised %d gap-derived coverage answers", gapChecks)
	}
}

func mustFile(t *testing.T, snap *verify.Snapshot, p string) []byte {
	t.Helper()
	b, ok := snap.File(p)
	if !ok {
		t.Fatalf("%s missing", p)
	}
	return b
}

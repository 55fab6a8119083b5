package reviewmcp

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/test/verifytest"
)

// Spec: in off and the constrained lifecycle the built-in MCP serves "only the built-in
// immutable evidence": the immutable view lists exactly the collection profile and the
// entity's immutable identity, withholds every record (body, comments, reviews, checks,
// logs, threads, actors, agent runs), and no coverage answer over a withheld kind is
// authoritative.
func TestImmutableViewServesOnlyImmutableEvidence(t *testing.T) {
	cfg := constrainedConfig(t, verifytest.Demo)
	cfg.View = ViewImmutable
	s := mustStart(t, cfg)
	list := s.ok(t, ToolEvidence, `{"action":"list","page_size":50}`)
	var ids []string
	for _, it := range list["items"].([]any) {
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	if !slices.Equal(ids, []string{"doc_collection", "doc_entity_metadata"}) {
		t.Fatalf("immutable view lists %v", ids)
	}
	ent := s.ok(t, ToolEvidence, `{"action":"get","id":"doc_entity_metadata"}`)
	content := ent["content"].(string)
	for _, k := range []string{`"title"`, `"labels"`, `"author"`, `"author_id"`, `"updated_at"`, `"id"`} {
		if strings.Contains(content, k) {
			t.Errorf("entity identity carries %s: %s", k, content)
		}
	}
	for _, k := range []string{"comment", "entity", "review", "check", "check_log"} {
		cov := s.ok(t, toolEvidenceCoverage, `{"kind":"`+k+`","scope":"`+kindScope[k]+`"}`)
		if cov["state"] != "unknown" || cov["absence_authoritative"] != false || !slices.Contains(toStrings(cov["reasons"]), "view_withheld") {
			t.Errorf("coverage of withheld kind %s: %v", k, cov)
		}
	}
	// the same tree in the snapshot view serves the entity body
	full := mustStart(t, constrainedConfig(t, verifytest.Demo))
	if n := len(full.ok(t, ToolEvidence, `{"action":"list","page_size":50}`)["items"].([]any)); n <= 2 {
		t.Fatalf("the snapshot view serves %d items", n)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// The metadata projection is served as one document in the immutable view, pinned by its
// SHA-256; it is refused outside the immutable constrained view, and a tampered file is not
// served.
func TestImmutableViewServesMetadataProjection(t *testing.T) {
	b, err := EncodeMetadata(MetadataDoc{Descriptor: "merge request metadata (untrusted)", Text: "Title: Add widget caching", Completeness: "complete"})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "metadata.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := constrainedConfig(t, verifytest.Demo)
	cfg.View, cfg.MetadataPath = ViewImmutable, p
	s := mustStart(t, cfg)
	got := s.ok(t, ToolEvidence, `{"action":"get","id":"`+docReviewMetadata+`"}`)
	if got["content"] != string(b) {
		t.Fatalf("metadata document %v", got["content"])
	}
	for name, mut := range map[string]func(c *Config){
		"snapshot view": func(c *Config) { c.View = ViewSnapshot },
		"enriched":      func(c *Config) { c.Mode = ModeEnriched; c.StoreDir, c.RunID, c.PolicyDigest = "s", "r", "p" },
		"wrong digest":  func(c *Config) { c.MetadataSHA256 = strings.Repeat("0", 64) },
	} {
		c := constrainedConfig(t, verifytest.Demo)
		c.View, c.MetadataPath = ViewImmutable, p
		mut(&c)
		if _, err := startServe(t, c, ""); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err %v, want ErrConfig", name, err)
		}
	}
}

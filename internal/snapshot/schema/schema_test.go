package schema

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// publishedBundle is the published v1 bundle copied into the repository so tests do not
// depend on the spec folder being present.
func publishedBundle(t *testing.T) *Bundle {
	t.Helper()
	b, err := Load(os.DirFS("../../../test/fixtures/ecs-v1-published"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBothBundlesCompileWithEveryDocumentSchema(t *testing.T) {
	p, err := Project()
	if err != nil {
		t.Fatal(err)
	}
	pub := publishedBundle(t)
	for _, name := range documentSchemas {
		if p.ID(name) == "" || p.ID(name) != pub.ID(name) {
			t.Errorf("%s: $id %q (project) vs %q (published)", name, p.ID(name), pub.ID(name))
		}
	}
}

// Compatibility: the project bundle requires admission.human_min_role; the published one does
// not allow it yet (the one known difference).
func TestCollectionAdmissionIsTheKnownDifference(t *testing.T) {
	p, _ := Project()
	pub := publishedBundle(t)
	base := `"entity_kind":"work_item","included_sources":["comments","entity"],"record_selection":"newest","check_log_selection":"none","bounds":{"max_records_per_source":1,"max_source_bytes":1,"max_record_bytes":1,"max_log_bytes":1,"max_metadata_string_bytes":1,"max_labels":0}`
	with := []byte(`{"admission":{"human_min_role":"triage"},` + base + `}`)
	without := []byte(`{` + base + `}`)
	if err := p.Validate(Collection, with); err != nil {
		t.Errorf("project rejects admission: %v", err)
	}
	if err := p.Validate(Collection, without); !errors.Is(err, ErrInvalid) {
		t.Errorf("project accepts a collection without admission: %v", err)
	}
	if err := p.Validate(Collection, []byte(`{"admission":{"human_min_role":"read"},`+base+`}`)); !errors.Is(err, ErrInvalid) {
		t.Errorf("project accepts human_min_role read: %v", err)
	}
	if err := pub.Validate(Collection, without); err != nil {
		t.Errorf("published rejects a collection without admission: %v", err)
	}
	if err := pub.Validate(Collection, with); !errors.Is(err, ErrInvalid) {
		t.Errorf("published accepts admission (NOTE.md says it does not): %v", err)
	}
}

// Compatibility: an unavailable sibling or unresolved reference is a validation error, never
// a network fetch.
func TestMissingSiblingIsAnErrorNotAFetch(t *testing.T) {
	fsys := fstest.MapFS{}
	src := os.DirFS("../../../docs/normative/entity-context-snapshot/v1")
	for _, name := range documentSchemas {
		data, err := fs.ReadFile(src, name)
		if err != nil {
			t.Fatal(err)
		}
		fsys[name] = &fstest.MapFile{Data: data}
	}
	_, err := Load(fsys)
	if err == nil || !strings.Contains(err.Error(), "common.schema.json") {
		t.Fatalf("bundle without common.schema.json loaded: %v", err)
	}
}

func TestIDMustNameTheFile(t *testing.T) {
	fsys := fstest.MapFS{"x.schema.json": &fstest.MapFile{Data: []byte(`{"$id":"https://example.invalid/y.schema.json"}`)}}
	if _, err := Load(fsys); err == nil {
		t.Fatal("a $id that does not end in the file name was accepted")
	}
}

// Canonical bytes / security patterns: patterns are enforced, not ignored.
func TestSecurityPatternsAreEnforced(t *testing.T) {
	p, _ := Project()
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{`{"threads":[{"id":"T_1","thread_key":"` + strings.Repeat("a", 64) + `","resolved":false,"outdated":false}]}`, true},
		{`{"threads":[{"id":"T 1","thread_key":"` + strings.Repeat("a", 64) + `","resolved":false,"outdated":false}]}`, false},
		{`{"threads":[{"id":"T_1","thread_key":"` + strings.Repeat("A", 64) + `","resolved":false,"outdated":false}]}`, false},
		{`{"threads":[{"id":"T_1","thread_key":"` + strings.Repeat("a", 64) + `","resolved":true,"outdated":false}]}`, false},
	} {
		err := p.Validate(Threads, []byte(tc.doc))
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.doc, err, tc.ok)
		}
	}
	if err := p.Validate(Check, []byte(`{"id":"1","name":"x","status":"queued","created_at":"2026-02-30T00:00:00.000000000Z","head_sha":"`+strings.Repeat("a", 40)+`"}`)); err == nil {
		t.Error("date-time format not asserted (Feb 30 accepted)")
	}
}

// The project bundle is the published bundle plus the documented differences only
// (docs/normative/entity-context-snapshot/v1/README.md): every other file is byte-identical.
func TestProjectBundleDiffersOnlyWhereDocumented(t *testing.T) {
	documented := map[string]bool{Collection: true, Index: true}
	pub := os.DirFS("../../../test/fixtures/ecs-v1-published")
	names, _ := fs.Glob(pub, "*.schema.json")
	if len(names) != 9 {
		t.Fatalf("published bundle has %d schemas, want 9", len(names))
	}
	for _, name := range names {
		a, _ := fs.ReadFile(pub, name)
		b, err := fs.ReadFile(os.DirFS("../../../docs/normative/entity-context-snapshot/v1"), name)
		if err != nil {
			t.Fatalf("project bundle lacks %s", name)
		}
		if same := string(a) == string(b); same == documented[name] {
			t.Errorf("%s: identical=%v, documented difference=%v", name, same, documented[name])
		}
	}
}

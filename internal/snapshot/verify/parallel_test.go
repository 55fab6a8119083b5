package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
	"github.com/forgectx/forgectx/test/acqcorpus"
)

func rules(vs []Violation) map[string]bool {
	out := map[string]bool{}
	for _, v := range vs {
		out[v.Rule] = true
	}
	return out
}

// The chunked index check reaches the same verdict (schema_invalid, not_canonical_json) as
// validating and canonicalising the whole index, on an index of several chunks and on edits
// that break an item of a late chunk, a scalar member, member order and whitespace.
func TestChunkedIndexCheckEqualsWholeDocumentCheck(t *testing.T) {
	acq := acqcorpus.Make(1500)
	tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: acqcorpus.Profile(1500),
		Category: snapshot.CategoryObservation, Filter: filter.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := schema.Project()
	if err != nil {
		t.Fatal(err)
	}
	idx := tree.Index
	lastID := acq.Checks[len(acq.Checks)-1].ID
	cases := map[string][]byte{
		"assembled":         idx,
		"late item invalid": bytes.Replace(idx, []byte(`"id":"`+lastID+`"`), []byte(`"id":"`+lastID+`","extra":1`), 1),
		"late item spaced":  bytes.Replace(idx, []byte(`"id":"`+lastID+`"`), []byte(`"id": "`+lastID+`"`), 1),
		"scalar invalid":    bytes.Replace(idx, []byte(`"schema_version":1`), []byte(`"schema_version":1.0`), 1),
		"trailing newline":  append(append([]byte(nil), idx...), '\n'),
	}
	// Move schema_version to the front: same members, not RFC 8785 order.
	moved := append([]byte(`{"schema_version":1,`), bytes.Replace(idx[1:], []byte(`,"schema_version":1`), nil, 1)...)
	cases["schema_version first"] = moved
	for name, doc := range cases {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(doc, &probe); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		parts, split := splitIndex(probe)
		got, want := rules(indexViolations(b, doc, parts, split)), rules(jsonViolations(b, "index.json", schema.Index, doc))
		if len(got) != len(want) || got[RuleSchemaInvalid] != want[RuleSchemaInvalid] || got[RuleNotCanonical] != want[RuleNotCanonical] {
			t.Errorf("%s: chunked %v, whole %v", name, got, want)
		}
		if name != "assembled" && len(want) == 0 {
			t.Errorf("%s: the edit broke no rule; the case tests nothing", name)
		}
	}
	if len(tree.Files) <= indexChunk {
		t.Fatalf("only %d files: the index has fewer than two chunks", len(tree.Files))
	}
}

// relations/reviews.json and state/threads.json checked in chunks give exactly the violations
// of checking them whole (details included), on documents of several chunks and on edits of
// a late item (schema and form), member order, a repeated member and a trailing newline.
func TestChunkedArrayDocCheckEqualsWholeDocumentCheck(t *testing.T) {
	const n = 4000 // MakeBusy: about n/3.75 threads, so relations/reviews.json has two chunks
	tree, err := snapshot.Assemble(context.Background(), acqcorpus.MakeBusy(n), snapshot.Config{Profile: acqcorpus.Profile(n),
		Category: snapshot.CategoryObservation, Filter: filter.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := schema.Project()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		path, schema, lastItem string
		arrays                 []string
	}{
		{"relations/reviews.json", schema.Reviews, `{"created_at":`, []string{"reviews", "threads"}},
		{"state/threads.json", schema.Threads, `{"id":`, []string{"threads"}},
	} {
		doc, ok := tree.File(d.path)
		if !ok {
			t.Fatalf("no %s", d.path)
		}
		top, _, _ := splitTop(doc)
		if parts, _ := splitDoc(top, d.arrays...); parts.longest() <= indexChunk {
			t.Fatalf("%s: %d items, fewer than two chunks", d.path, parts.longest())
		}
		last := bytes.LastIndex(doc, []byte(d.lastItem))
		edit := func(insert string) []byte {
			return append(append(append([]byte(nil), doc[:last+1]...), insert...), doc[last+1:]...)
		}
		first := d.arrays[0]
		cases := map[string][]byte{
			"assembled":         doc,
			"late item invalid": edit(`"extra":1,`),
			"late item spaced":  edit(` `),
			"trailing newline":  append(append([]byte(nil), doc...), '\n'),
			"repeated member":   append([]byte(`{"`+first+`":[],`), doc[1:]...),
		}
		if len(d.arrays) == 2 {
			// threads before reviews: the same members, not RFC 8785 order.
			top, _, _ := splitTop(doc)
			cases["members swapped"] = []byte(`{"threads":` + string(top["threads"]) + `,"reviews":` + string(top["reviews"]) + `}`)
		}
		for name, c := range cases {
			got, want := arrayDocViolations(b, d.path, d.schema, c, d.arrays...), jsonViolations(b, d.path, d.schema, c)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: chunked %v, whole %v", d.path, name, got, want)
			}
			if name != "assembled" && len(want) == 0 {
				t.Errorf("%s %s: the edit broke no rule; the case tests nothing", d.path, name)
			}
		}
	}
}

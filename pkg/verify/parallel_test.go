package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/pkg/snapshot"
	"github.com/forgectx/forgectx/pkg/snapshot/schema"
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

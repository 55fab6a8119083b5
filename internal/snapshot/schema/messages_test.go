package schema_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/demo"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
)

// demoIndex returns the demo snapshot's index.json decoded, a valid document to break.
func demoIndex(t *testing.T) map[string]any {
	t.Helper()
	res, err := demo.Run(context.Background(), demo.Options{Out: t.TempDir() + "/tree"})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(res.Tree.Index, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// Regression: renaming "gaps" in index.json made verify print
// "schema validation failed: / (schema ); / (schema )". Every message now names the JSON
// pointer of the instance, the keyword and what was expected — and never a document value.
func TestSchemaErrorsNamePointerKeywordAndExpectation(t *testing.T) {
	b, err := schema.Project()
	if err != nil {
		t.Fatal(err)
	}
	const planted = "PLANTED-VALUE-must-not-be-echoed"
	for _, c := range []struct {
		name   string
		break_ func(doc map[string]any)
		want   []string
	}{
		{"renamed gaps", func(d map[string]any) { d["gapz"] = d["gaps"]; delete(d, "gaps") },
			[]string{"/gaps: required: property missing", "/gapz: additionalProperties: property not allowed"}},
		{"wrong type", func(d map[string]any) { d["files"] = planted },
			[]string{"/files: type: want array, got string"}},
		{"bad pattern", func(d map[string]any) { d["collection_profile"] = planted },
			[]string{"/collection_profile: pattern: does not match "}},
		{"nested missing", func(d map[string]any) { delete(d["entity"].(map[string]any), "kind") },
			[]string{"/entity/kind: required: property missing"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := demoIndex(t)
			c.break_(doc)
			raw, _ := json.Marshal(doc)
			err := b.Validate(schema.Index, raw)
			if !errors.Is(err, schema.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			msg := err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "(schema )") || strings.Contains(msg, planted) {
				t.Errorf("message %q is empty of meaning or echoes the document's value", msg)
			}
		})
	}
}

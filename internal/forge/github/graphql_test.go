package github_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/test/ghscenario"
)

// loadGitHubSchema loads GitHub's published GraphQL schema (@octokit/graphql-schema, vendored
// as test/fixtures/github/schema.graphql).
func loadGitHubSchema(t *testing.T) *ast.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixturesDir, "schema.graphql"))
	if err != nil {
		t.Fatal(err)
	}
	sdoc, perr := parser.ParseSchemas(validator.Prelude, &ast.Source{Name: "schema.graphql", Input: string(raw)})
	if perr != nil {
		t.Fatalf("parse schema: %v", perr)
	}
	// The published schema defines a few fields twice in one type (e.g.
	// EnterpriseOwnerInfo.repositoryDeployKeySetting); the copies are identical, so keep the
	// first. A differing duplicate would be a real conflict and fails the test.
	for _, def := range sdoc.Definitions {
		seen := map[string]*ast.FieldDefinition{}
		kept := def.Fields[:0]
		for _, f := range def.Fields {
			if prev, dup := seen[f.Name]; dup {
				if prev.Type.String() != f.Type.String() || len(prev.Arguments) != len(f.Arguments) {
					t.Fatalf("schema: %s.%s defined twice with different signatures", def.Name, f.Name)
				}
				continue
			}
			seen[f.Name] = f
			kept = append(kept, f)
		}
		def.Fields = kept
	}
	schema, gerr := validator.ValidateSchemaDocument(sdoc)
	if gerr != nil {
		t.Fatalf("load schema: %v", gerr)
	}
	return schema
}

// Every GraphQL document the adapter sends validates against GitHub's published schema.
func TestEveryGraphQLDocumentValidatesAgainstGitHubSchema(t *testing.T) {
	schema := loadGitHubSchema(t)
	names := make([]string, 0, len(github.Documents))
	for n := range github.Documents {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) != 8 {
		t.Fatalf("documents = %v; a new document must be added to this test's expectations", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQueryWithRules(schema, github.Documents[name], nil)
			if len(errs) > 0 {
				t.Fatalf("%s does not validate: %v", name, errs)
			}
			if len(doc.Operations) != 1 || doc.Operations[0].Name != name {
				t.Fatalf("%s: want exactly one operation named %s", name, name)
			}
		})
	}
	// The validator is not vacuous: a field GitHub does not have is rejected.
	if _, errs := gqlparser.LoadQueryWithRules(schema, `query X { repository(owner: "a", name: "b") { noSuchField } }`, nil); len(errs) == 0 {
		t.Fatal("validator accepted an unknown field")
	}
}

// The GraphQL responses in the scenario cassettes are shaped exactly like GitHub's answers to
// the adapter's documents: every selected field (by alias) is present, nothing else is, and a
// null appears only where the schema allows one.
func TestScenarioGraphQLResponsesMatchTheDocuments(t *testing.T) {
	schema := loadGitHubSchema(t)
	checked := map[string]int{}
	for name, mk := range map[string]func() *ghscenario.Scenario{"issue": ghscenario.Issue, "pr": ghscenario.PR, "large": ghscenario.Large, "large from the end": ghscenario.Large} {
		c := build(t, mk())
		if name == "large from the end" {
			ins, err := ghscenario.FromEnd(mk())
			if err != nil {
				t.Fatal(err)
			}
			c = &cassette.Cassette{Interactions: ins}
		}
		for i, in := range c.Interactions {
			rb, _ := in.Request.Body.Bytes()
			if len(rb) == 0 {
				continue
			}
			var req struct {
				Query         string `json:"query"`
				OperationName string `json:"operationName"`
			}
			if err := json.Unmarshal(rb, &req); err != nil {
				t.Fatal(err)
			}
			doc, gerrs := gqlparser.LoadQueryWithRules(schema, req.Query, nil)
			if len(gerrs) > 0 {
				t.Fatalf("%s #%d: %v", name, i, gerrs)
			}
			var resp struct {
				Data any `json:"data"`
			}
			if err := json.Unmarshal(in.Response.Body.JSON, &resp); err != nil {
				t.Fatal(err)
			}
			var shapeErrs []string
			w := shapeWalker{errs: &shapeErrs, schema: schema, doc: doc}
			w.walk(name+" "+req.OperationName, doc.Operations[0].SelectionSet, "Query", resp.Data)
			for _, e := range shapeErrs {
				t.Error(e)
			}
			checked[req.OperationName]++
		}
	}
	for op := range github.Documents {
		if checked[op] == 0 {
			t.Errorf("no %s response was checked", op)
		}
	}
	// The walker is not vacuous: an extra field, a missing field and a null for a non-null
	// field are each reported.
	doc, _ := gqlparser.LoadQueryWithRules(schema, github.Documents["Dismissals"], nil)
	for _, bad := range []string{
		`{"repository":{"pullRequest":{"timelineItems":{"pageInfo":{"hasNextPage":false,"endCursor":null},"nodes":[],"extra":1}}}}`,
		`{"repository":{"pullRequest":{"timelineItems":{"pageInfo":{"hasNextPage":false},"nodes":[]}}}}`,
		`{"repository":{"pullRequest":{"timelineItems":{"pageInfo":{"hasNextPage":null,"endCursor":null},"nodes":[]}}}}`,
	} {
		var v any
		_ = json.Unmarshal([]byte(bad), &v)
		var errs []string
		shapeWalker{errs: &errs, schema: schema, doc: doc}.walk("bad", doc.Operations[0].SelectionSet, "Query", v)
		if len(errs) == 0 {
			t.Errorf("walker accepted %s", bad)
		}
	}
}

type shapeWalker struct {
	errs   *[]string
	schema *ast.Schema
	doc    *ast.QueryDocument
}

func (w shapeWalker) errorf(format string, a ...any) {
	*w.errs = append(*w.errs, fmt.Sprintf(format, a...))
}

// applies reports whether a fragment on cond applies to an object of (runtime) type typename,
// or — when the response carries no __typename — to the field's static type.
func (w shapeWalker) applies(cond, typename, static string) bool {
	if cond == "" || cond == typename || cond == static {
		return true
	}
	contains := func(abstract, name string) bool {
		def := w.schema.Types[abstract]
		if def == nil {
			return false
		}
		for _, p := range w.schema.GetPossibleTypes(def) {
			if p.Name == name {
				return true
			}
		}
		return false
	}
	if typename != "" {
		return contains(cond, typename)
	}
	// No __typename: the fragment may apply when its type and the static type overlap (a
	// `node(id:) { ... on PullRequestReviewThread }` answer carries only that fragment's fields).
	return contains(cond, static) || contains(static, cond)
}

func (w shapeWalker) fields(sel ast.SelectionSet, typename, static string, out map[string]*ast.Field) {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			out[s.Alias] = s
		case *ast.InlineFragment:
			if w.applies(s.TypeCondition, typename, static) {
				w.fields(s.SelectionSet, typename, static, out)
			}
		case *ast.FragmentSpread:
			if f := w.doc.Fragments.ForName(s.Name); f != nil && w.applies(f.TypeCondition, typename, static) {
				w.fields(f.SelectionSet, typename, static, out)
			}
		}
	}
}

func (w shapeWalker) walk(where string, sel ast.SelectionSet, static string, v any) {
	switch v := v.(type) {
	case []any:
		for _, el := range v {
			w.walk(where+"[]", sel, static, el)
		}
	case map[string]any:
		typename, _ := v["__typename"].(string)
		want := map[string]*ast.Field{}
		w.fields(sel, typename, static, want)
		for k := range v {
			if _, ok := want[k]; !ok {
				w.errorf("%s: unselected field %q", where, k)
			}
		}
		for alias, f := range want {
			val, ok := v[alias]
			if !ok {
				w.errorf("%s: selected field %q missing", where, alias)
				continue
			}
			if val == nil {
				if f.Definition != nil && f.Definition.Type.NonNull {
					w.errorf("%s.%s: null for non-null %s", where, alias, f.Definition.Type)
				}
				continue
			}
			if len(f.SelectionSet) > 0 {
				w.walk(where+"."+alias, f.SelectionSet, f.Definition.Type.Name(), val)
			}
		}
	}
}

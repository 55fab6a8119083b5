package github

import (
	"os"
	"sort"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// Every GraphQL document the adapter sends validates against GitHub's published schema
// (@octokit/graphql-schema, vendored as test/fixtures/github/schema.graphql).
func TestEveryGraphQLDocumentValidatesAgainstGitHubSchema(t *testing.T) {
	raw, err := os.ReadFile("../../../test/fixtures/github/schema.graphql")
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
	names := make([]string, 0, len(Documents))
	for n := range Documents {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) != 4 {
		t.Fatalf("documents = %v; a new document must be added to this test's expectations", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQueryWithRules(schema, Documents[name], nil)
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

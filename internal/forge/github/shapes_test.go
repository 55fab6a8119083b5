package github_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/forgectx/forgectx/test/ghscenario"
)

// shapes are the required and known property names of GitHub's REST response objects,
// extracted from @octokit/openapi (test/fixtures/github/openapi-shapes.json).
type shapes struct {
	Schemas map[string]struct {
		Required   []string `json:"required"`
		Properties []string `json:"properties"`
	} `json:"schemas"`
}

// endpointShapes maps a REST path to the schema of its items and the member holding them
// ("" for a bare array or a single object).
var endpointShapes = []struct {
	path   *regexp.Regexp
	schema string
	member string
}{
	{regexp.MustCompile(`/issues/\d+/comments$`), "issue-comment", ""},
	{regexp.MustCompile(`/pulls/\d+/reviews$`), "pull-request-review", ""},
	{regexp.MustCompile(`/commits/[0-9a-f]+/check-runs$`), "check-run", "check_runs"},
	{regexp.MustCompile(`/actions/runs$`), "workflow-run", "workflow_runs"},
	{regexp.MustCompile(`/actions/runs/\d+/jobs$`), "job", "jobs"},
	{regexp.MustCompile(`/collaborators/[^/]+/permission$`), "repository-collaborator-permission", ""},
}

// nested names the schema of object-valued members checked recursively.
var nested = map[string]string{"user": "simple-user", "repository": "minimal-repository",
	"head_repository": "minimal-repository", "head_commit": "nullable-simple-commit", "owner": "simple-user", "actor": "simple-user", "triggering_actor": "simple-user"}

// Every REST object the scenario maker emits has GitHub's shape: all required properties of
// its OpenAPI schema and no property the schema does not define (nested users, repositories
// and commits included), so the adapter is tested on what GitHub really sends.
func TestScenarioRESTBodiesHaveGitHubsShapes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixturesDir, "openapi-shapes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sh shapes
	if err := json.Unmarshal(raw, &sh); err != nil {
		t.Fatal(err)
	}
	var check func(where, schema string, obj map[string]any)
	check = func(where, schema string, obj map[string]any) {
		s, ok := sh.Schemas[schema]
		if !ok {
			t.Fatalf("no schema %s", schema)
		}
		known := map[string]bool{}
		for _, p := range s.Properties {
			known[p] = true
		}
		for _, r := range s.Required {
			if _, ok := obj[r]; !ok {
				t.Errorf("%s: %s lacks required %q", where, schema, r)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !known[k] {
				t.Errorf("%s: %s has unknown property %q", where, schema, k)
			}
			if ns, ok := nested[k]; ok {
				if m, ok := obj[k].(map[string]any); ok {
					check(where+"."+k, ns, m)
				}
			}
		}
	}
	checked := map[string]int{}
	for name, mk := range map[string]func() *ghscenario.Scenario{"issue": ghscenario.Issue, "pr": ghscenario.PR, "large": ghscenario.Large} {
		c := build(t, mk())
		for i, in := range c.Interactions {
			u, _ := url.Parse(in.Request.URL)
			if in.Response == nil || in.Response.Status != 200 {
				continue
			}
			for _, es := range endpointShapes {
				if !es.path.MatchString(u.Path) {
					continue
				}
				var v any
				if err := json.Unmarshal(in.Response.Body.JSON, &v); err != nil {
					t.Fatalf("%s #%d: %v", name, i, err)
				}
				if es.member != "" {
					v = v.(map[string]any)[es.member]
				}
				items, ok := v.([]any)
				if !ok {
					items = []any{v}
				}
				for _, it := range items {
					check(name+" "+u.Path, es.schema, it.(map[string]any))
					checked[es.schema]++
				}
			}
		}
	}
	for _, es := range endpointShapes {
		if checked[es.schema] == 0 {
			t.Errorf("no %s object was checked", es.schema)
		}
	}
}

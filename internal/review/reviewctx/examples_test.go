package reviewctx

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The templates under examples/gitlab/context/ are what the spec tells operators to copy to
// .opencodereview/review-context-policy.json and into OCR_REVIEW_CONTEXT_ADAPTERS_JSON: each
// must validate as shipped, select what its name promises, and every reference a policy names
// must be served by the shipped adapter allowlist (the policy can only select and narrow).
func TestShippedContextTemplatesValidate(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "examples", "gitlab", "context")
	policies := []struct {
		file, version string
		sources       []string
	}{
		{"policy-discussions.json", "ocr.review-context-policy/v2", []string{SourceDiscussions, SourceRemediation}},
		{"policy-adapters.json", "ocr.review-context-policy/v2", []string{SourceDiscussions, SourceRemediation, SourceReferences}},
		{"policy-ci-outcomes.json", "ocr.review-context-policy/v3", []string{SourceDiscussions, SourceRemediation, SourceCI}},
	}
	adapterBytes, err := os.ReadFile(filepath.Join(dir, "adapters-both.json"))
	if err != nil {
		t.Fatal(err)
	}
	adapters, err := ParseAdapters(string(adapterBytes))
	if err != nil {
		t.Fatalf("adapters-both.json: %v", err)
	}
	served := map[string]AdapterConfig{}
	for _, a := range adapters {
		served[a.Name] = a
	}
	for _, p := range policies {
		b, err := os.ReadFile(filepath.Join(dir, p.file))
		if err != nil {
			t.Fatal(err)
		}
		pol, err := parsePolicy(b)
		if err != nil {
			t.Errorf("%s: %v", p.file, err)
			continue
		}
		if pol.SchemaVersion != p.version {
			t.Errorf("%s: schema_version %q, want %q", p.file, pol.SchemaVersion, p.version)
		}
		if got := pol.Sources(); !reflect.DeepEqual(got, p.sources) {
			t.Errorf("%s: sources %v, want %v", p.file, got, p.sources)
		}
		for i, r := range pol.References {
			a, ok := served[r.Adapter]
			if !ok {
				t.Errorf("%s: references[%d] names adapter %q, which adapters-both.json does not define", p.file, i, r.Adapter)
				continue
			}
			if !contains(a.Tenants, r.Tenant) || !contains(a.ResourceClasses, r.ResourceClass) {
				t.Errorf("%s: references[%d] (%s/%s) is outside adapter %q's tenants %v and classes %v", p.file, i, r.Tenant, r.ResourceClass, a.Name, a.Tenants, a.ResourceClasses)
			}
		}
	}
	stdio, err := os.ReadFile(filepath.Join(dir, "adapters-stdio.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseAdapters(string(stdio)); err != nil {
		t.Errorf("adapters-stdio.json: %v", err)
	}
}

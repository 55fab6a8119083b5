package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/pkg/forge/httpfake"
	"github.com/forgectx/forgectx/pkg/reviewctx"
)

func TestReviewContextPolicyValidateExample(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"review-context", "policy", "validate", "../../pkg/reviewctx/testdata/policy-v2-example.json"}, nil, &out, &errb, func(string) string { return "" }, func() []string { return nil })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !regexp.MustCompile(`^version: ocr.review-context-policy/v2\ndigest: sha256:[0-9a-f]{64}\nsources: forge_discussions remediation_threads references\n$`).MatchString(out.String()) {
		t.Fatalf("output %q", out.String())
	}
}

func TestReviewContextPolicyValidateRejectsWithExit2(t *testing.T) {
	f := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(f, []byte(`{"schema_version":"ocr.review-context-policy/v9"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"review-context", "policy", "validate", f}, nil, &out, &errb, func(string) string { return "" }, func() []string { return nil })
	if code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "$.schema_version: unknown version") {
		t.Fatalf("exit %d out %q err %q", code, out.String(), errb.String())
	}
	link := filepath.Join(t.TempDir(), "l.json")
	if err := os.Symlink("../../pkg/reviewctx/testdata/policy-v2-example.json", link); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := run(context.Background(), []string{"review-context", "policy", "validate", link}, nil, &out, &errb, func(string) string { return "" }, func() []string { return nil }); code != 2 || !strings.Contains(errb.String(), "regular file") {
		t.Fatalf("symlink: exit %d %q", code, errb.String())
	}
}

func acquireEnv(vars map[string]string) (func(string) string, func() []string) {
	return func(k string) string { return vars[k] }, func() []string {
		var out []string
		for k, v := range vars {
			out = append(out, k+"="+v)
		}
		return out
	}
}

func TestReviewContextAcquireSelectorsFailClosedBeforeAnyRequest(t *testing.T) {
	fake := httpfake.New(t) // no expectations: any request fails the test
	for _, c := range []struct {
		rule string
		vars map[string]string
		want string
	}{
		{"unknown mode", map[string]string{"OCR_REVIEW_CONTEXT_MODE": "full"}, "OCR_REVIEW_CONTEXT_MODE"},
		{"empty protection mode", map[string]string{"OCR_REVIEW_CONTEXT_MODE": "metadata", "OCR_GITLAB_TARGET_PROTECTION_MODE": ""}, "OCR_GITLAB_TARGET_PROTECTION_MODE"},
		{"other protection mode", map[string]string{"OCR_GITLAB_TARGET_PROTECTION_MODE": "required"}, "OCR_GITLAB_TARGET_PROTECTION_MODE"},
		{"malformed adapters", map[string]string{"OCR_REVIEW_CONTEXT_MODE": "enriched", "OCR_REVIEW_CONTEXT_ADAPTERS_JSON": "{"}, "OCR_REVIEW_CONTEXT_ADAPTERS_JSON"},
	} {
		t.Run(c.rule, func(t *testing.T) {
			c.vars["CI_API_V4_URL"] = fake.URL + "/api/v4"
			getenv, environ := acquireEnv(c.vars)
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"review-context", "acquire", "--project", "42", "--mr", "7", "--store-dir", filepath.Join(t.TempDir(), "s")}, nil, &out, &errb, getenv, environ)
			if code != 2 || !strings.Contains(errb.String(), c.want) {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
		})
	}
}

func TestReviewContextAcquireMetadataCommitsStore(t *testing.T) {
	fx := func(name string) []byte {
		b, err := os.ReadFile("../../pkg/reviewctx/testdata/gitlab/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fake := httpfake.New(t)
	fake.Expect("GET", "/api/v4/projects/42/merge_requests/7", httpfake.JSON(200, fx("merge_request")), httpfake.JSON(200, fx("merge_request")))
	fake.Expect("GET", "/api/v4/projects/42/repository/branches/main", httpfake.JSON(200, fx("branch_main")))
	dir := filepath.Join(t.TempDir(), "s")
	getenv, environ := acquireEnv(map[string]string{"OCR_REVIEW_CONTEXT_MODE": "metadata", "CI_API_V4_URL": fake.URL + "/api/v4", "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "7", "GITLAB_TOKEN": "glpat-abcdefghijklmnop"})
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"review-context", "acquire", "--store-dir", dir}, nil, &out, &errb, getenv, environ); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "mode: metadata\ntarget: protected\nstore: written\nrecords: 1\nsource merge_request_metadata: optional complete records=1 omitted=0 reasons=-\n"
	if out.String() != want {
		t.Fatalf("summary %q", out.String())
	}
	if strings.Contains(out.String()+errb.String(), "widget caching") || strings.Contains(errb.String(), "glpat-") {
		t.Fatal("summary or log carries record text or the token")
	}
	if _, err := reviewctx.LoadStore(dir, nil); err != nil {
		t.Fatal(err)
	}
}

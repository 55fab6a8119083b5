package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/test/httpfake"
)

func TestReviewContextPolicyValidateExample(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"review-context", "policy", "validate", "../../internal/review/reviewctx/testdata/policy-v2-example.json"}, nil, &out, &errb, func(string) string { return "" }, func() []string { return nil })
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
	if err := os.Symlink("../../internal/review/reviewctx/testdata/policy-v2-example.json", link); err != nil {
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

// The one transport rule: a plain-http API base on a non-loopback host is refused before the
// token is read or any request is made (the host does not resolve: a request would fail the
// run differently, with exit 1).
func TestReviewContextAcquirePlainHTTPToNonLoopbackIsRefused(t *testing.T) {
	getenv, environ := acquireEnv(map[string]string{"OCR_REVIEW_CONTEXT_MODE": "metadata", "CI_API_V4_URL": "http://forge.invalid/api/v4"})
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"review-context", "acquire", "--project", "42", "--mr", "7", "--store-dir", filepath.Join(t.TempDir(), "s")}, nil, &out, &errb, getenv, environ)
	if code != 2 || !strings.Contains(errb.String(), "--api-url: must be https") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

func TestReviewContextAcquireMetadataCommitsStore(t *testing.T) {
	fx := func(name string) []byte {
		b, err := os.ReadFile("../../internal/review/reviewctx/testdata/gitlab/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fake := httpfake.New(t)
	fake.Expect("GET", "/api/v4/projects/42/merge_requests/7", httpfake.JSON(200, fx("merge_request")), httpfake.JSON(200, fx("merge_request")))
	fake.Expect("GET", "/api/v4/projects/42/repository/branches/main", httpfake.JSON(200, fx("branch_main")))
	fake.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx("user_bot"))) // the live bot's mention commands
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

func TestReviewContextAcquireEnrichedScenario(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile("../../internal/review/reviewctx/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const (
		api    = "/api/v4/projects/42"
		head   = "8e0b45049b6253b8984cde9241830d2851168142"
		target = "dd692733bb84bc3e9e862e66c099daec2fa00c83"
	)
	pg := func(b []byte, n, next int) httpfake.Reply {
		r := httpfake.JSON(200, b)
		r.Header.Set("X-Page", strconv.Itoa(n))
		if next > 0 {
			r.Header.Set("X-Next-Page", strconv.Itoa(next))
		}
		return r
	}
	var pipes []json.RawMessage
	json.Unmarshal(read("gitlab/pipelines.json"), &pipes)
	one, _ := json.Marshal(pipes[:1])
	var j1, j2 []json.RawMessage
	json.Unmarshal(read("gitlab/jobs_801_page1.json"), &j1)
	json.Unmarshal(read("gitlab/jobs_801_page2.json"), &j2)
	jobs, _ := json.Marshal(append(j1, j2...))
	fake := httpfake.New(t)
	mr := read("gitlab/merge_request.json")
	fake.Expect("GET", api+"/merge_requests/7", httpfake.JSON(200, mr), httpfake.JSON(200, mr))
	fake.Expect("GET", api+"/repository/branches/main", httpfake.JSON(200, read("gitlab/branch_main.json")))
	fake.Expect("GET", api+"/repository/tree?page=1&path=.opencodereview&per_page=100&ref="+target, pg(read("gitlab/tree_opencodereview.json"), 1, 0))
	fake.Expect("GET", api+"/repository/blobs/a1b2c3d4e5f60718293a4b5c6d7e8f9012345678/raw", httpfake.Reply{Status: 200, Body: read("policy-v3-ci.json")})
	fake.Expect("GET", "/api/v4/user", httpfake.JSON(200, read("gitlab/user_bot.json")))
	p1, p2 := read("gitlab/discussions_page1.json"), read("gitlab/discussions_remediation.json")
	fake.Expect("GET", api+"/merge_requests/7/discussions?page=1&per_page=100", pg(p1, 1, 2), pg(p1, 1, 2))
	fake.Expect("GET", api+"/merge_requests/7/discussions?page=2&per_page=100", pg(p2, 2, 0), pg(p2, 2, 0))
	fake.Expect("GET", api+"/pipelines?order_by=id&per_page=20&sha="+head+"&sort=desc", pg(one, 1, 0), pg(one, 1, 0))
	fake.Expect("GET", api+"/pipelines/801/jobs?include_retried=true&page=1&per_page=100", pg(jobs, 1, 0), pg(jobs, 1, 0))
	dir := filepath.Join(t.TempDir(), "s")
	reviewContextNow = func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
	t.Cleanup(func() { reviewContextNow = time.Now })
	getenv, environ := acquireEnv(map[string]string{"OCR_REVIEW_CONTEXT_MODE": "enriched", "CI_API_V4_URL": fake.URL + "/api/v4",
		"CI_MERGE_REQUEST_PROJECT_ID": "42", "GITLAB_CI": "true", "CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "7", "GITLAB_TOKEN": "glpat-abcdefghijklmnop", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": head})
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"review-context", "acquire", "--store-dir", dir}, nil, &out, &errb, getenv, environ); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"mode: enriched\ntarget: protected\npolicy: ocr.review-context-policy/v3 sha256:",
		"store: written\nrecords: 5\n", // metadata, the one selectable generic thread of page 1, one remediation thread, build and test
		"source forge_discussions: optional complete records=1",
		"source remediation_threads: optional complete records=1",
		"source ci_outcomes: required partial records=2 omitted=0 reasons=duplicate_retries,malformed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	s, err := reviewctx.LoadStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Records {
		if !reviewctx.ValidHandle(r.Handle) {
			t.Fatalf("handle %q", r.Handle)
		}
	}
}

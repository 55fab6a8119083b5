package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/test/httpfake"
)

const runHarness = `version: 1
agent:
  name: ocr
  category: observation
  command: ["/bin/true"]
  timeout: 60s
{{PRE}}profiles:
  change_proposal:
    included_sources: [entity, comments]
    record_selection: newest
    check_log_selection: none
    bounds: {max_records_per_source: 10, max_source_bytes: 4096, max_record_bytes: 4096, max_log_bytes: 1024, max_metadata_string_bytes: 256, max_labels: 10}
`

// Every configuration problem of `review-context run` exits 2 before any request (the fake
// has no expectation: a request would fail the test) and names the flag or field.
func TestReviewContextRunConfigErrorsExit2(t *testing.T) {
	fake := httpfake.New(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "h.yml")
	withPre := filepath.Join(dir, "pre.yml")
	for p, pre := range map[string]string{good: "", withPre: "pre_script:\n  command: [\"/bin/true\"]\n"} {
		if err := os.WriteFile(p, []byte(strings.Replace(runHarness, "{{PRE}}", pre, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := map[string]string{"CI_API_V4_URL": fake.URL + "/api/v4", "CI_MERGE_REQUEST_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "7", "GITLAB_TOKEN": "glpat-cmdRunToken0123456789"}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"harness required", nil, nil, "--harness: required"},
		{"bad mr", []string{"--harness", good, "--mr", "x"}, nil, "--mr"},
		{"plain http", []string{"--harness", good, "--api-url", "http://gitlab.example.com/api/v4"}, nil, "http"},
		{"missing harness file", []string{"--harness", filepath.Join(dir, "none.yml")}, nil, "--harness"},
		{"pre_script refused", []string{"--harness", withPre}, nil, "pre_script"},
		{"mode selector", []string{"--harness", good}, map[string]string{"OCR_REVIEW_CONTEXT_MODE": "full"}, "OCR_REVIEW_CONTEXT_MODE"},
		{"protection selector", []string{"--harness", good}, map[string]string{"OCR_GITLAB_TARGET_PROTECTION_MODE": ""}, "OCR_GITLAB_TARGET_PROTECTION_MODE"},
		{"preserve refused in MR execution", []string{"--harness", good, "--preserve-private-artifacts"}, map[string]string{"GITLAB_CI": "true"}, "--preserve-private-artifacts"},
		{"token unset", []string{"--harness", good, "--token-env", "NO_SUCH_TOKEN"}, nil, "NO_SUCH_TOKEN"},
		// the engine's view comes from the mode, never the profile: comments are refused
		{"profile asks for more", []string{"--harness", good}, nil, "comments: context mode off admits no comments source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{}
			for k, v := range base {
				vars[k] = v
			}
			for k, v := range tc.env {
				vars[k] = v
			}
			getenv, environ := acquireEnv(vars)
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"review-context", "run"}, tc.args...), nil, &out, &errb, getenv, environ)
			if code != 2 || !strings.Contains(errb.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 naming %s", code, errb.String(), tc.want)
			}
			if strings.Contains(errb.String(), "glpat-cmdRunToken") {
				t.Fatalf("the token reached stderr")
			}
		})
	}
}

package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// noRequestServer fails the test on any request: the cases below must be refused before the
// first one.
func noRequestServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "unexpected", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Every command validates all its flags before any request or credential read: each bad
// flag is exit 2 naming the flag and the rule, and the forge sees no request.
func TestFlagsValidatedBeforeAnyRequest(t *testing.T) {
	srv, requests := noRequestServer(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	harness := filepath.Join(dir, "h.yml")
	if err := os.WriteFile(harness, []byte("version: 1\nagent:\n  name: triage\n  category: observation\n  command: [\"true\"]\n  timeout: 1m\nprofiles:\n  work_item:\n    included_sources: [comments, entity]\n    record_selection: newest\n    check_log_selection: none\n    bounds: {max_records_per_source: 5, max_source_bytes: 4096, max_record_bytes: 1024, max_log_bytes: 1024, max_metadata_string_bytes: 64, max_labels: 5}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gl := []string{"review-context", "acquire", "--api-url", srv.URL + "/api/v4", "--project", "1", "--mr", "1", "--store-dir", filepath.Join(dir, "store")}
	withToken := map[string]string{"CI_JOB_TOKEN": "job-token-value-0123456789", "GITHUB_TOKEN": "gh-token-value-0123456789", "OCR_REVIEW_CONTEXT_MODE": "enriched"}
	noToken := map[string]string{"OCR_REVIEW_CONTEXT_MODE": "enriched"}
	st := []string{"status", "reconcile", "--number", "7", "--api-url", srv.URL, "--repo", "o/r", "--comment-author", "bot"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"acquire, token variable unset", noToken, gl, "--token-env CI_JOB_TOKEN: the environment variable is unset or empty"},
		{"acquire, malformed --expected-head", withToken, append(append([]string(nil), gl...), "--expected-head", "abc"), "--expected-head: must be a 40- or 64-digit"},
		{"acquire, --store-dir a regular file", withToken, append(append([]string(nil), gl[:len(gl)-2]...), "--store-dir", file), "is a regular file; must be a real directory"},
		{"acquire, --store-dir under a missing directory", withToken, append(append([]string(nil), gl[:len(gl)-2]...), "--store-dir", filepath.Join(dir, "no", "store")), "--store-dir"},
		{"reconcile, --agent and --harness", withToken, append(append([]string(nil), st...), "--agent", "triage", "--harness", harness), "--agent, --harness: mutually exclusive"},
		{"reconcile, invalid --agent", withToken, append(append([]string(nil), st...), "--agent", "bad name!"), "--agent: must match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := requests.Load()
			code, _, errOut := runCLI(t, tc.env, "", tc.args...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tc.want)
			}
			if n := requests.Load() - before; n != 0 {
				t.Errorf("%d requests made before the refusal", n)
			}
		})
	}
}

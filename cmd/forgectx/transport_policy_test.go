package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A token is never sent over plain http to a non-loopback host. snapshot, run and
// status reconcile refuse such an --api-url before any request, as a usage error naming
// --api-url and the rule (the old code sent "Authorization: bearer ghp_…" to it). The .invalid
// host cannot resolve, so no test ever reaches a network.
func TestPlainHTTPToANonLoopbackHostIsRefused(t *testing.T) {
	const tok = "ghp_plainHTTPTokenValue0123456789abcdef"
	dir := t.TempDir()
	h := filepath.Join(dir, "h.yml")
	if err := os.WriteFile(h, []byte(cliHarness), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "runner-temp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_TOKEN": tok, "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "o/r", "RUNNER_TEMP": tmp}
	const api = "http://forge.invalid/api/v3"
	for name, args := range map[string][]string{
		"snapshot": {"snapshot", "--forge", "github", "--repo", "o/r", "--number", "7", "--api-url", api,
			"--profile", ghProfile(t, "work_item"), "--category", "observation", "--out", filepath.Join(dir, "out")},
		"run":    {"run", "--harness", h, "--repo", "o/r", "--number", "7", "--api-url", api},
		"status": {"status", "reconcile", "--agent", "triage", "--number", "7", "--api-url", api},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := runCLI(t, env, "", args...)
			if code != exitUsage || !strings.Contains(stderr, "--api-url") || !strings.Contains(stderr, "must be https") {
				t.Errorf("exit %d, stderr %q; want 2 naming --api-url and the https rule", code, stderr)
			}
			if strings.Contains(stderr, tok) {
				t.Error("the token reached stderr")
			}
		})
	}
}

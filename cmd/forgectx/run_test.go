package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cliHarness = `version: 1
agent:
  name: triage
  category: observation
  command: ["true"]
profiles:
  work_item:
    included_sources: [comments, entity]
    record_selection: newest
    check_log_selection: none
    bounds: {max_records_per_source: 10, max_source_bytes: 4096, max_record_bytes: 4096, max_log_bytes: 4096, max_metadata_string_bytes: 256, max_labels: 5}
`

// Configuration errors exit 2 before anything is posted (no forge is reachable in these
// cases: a request would fail the run with exit 1 instead).
func TestRunConfigurationErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "h.yml")
	if err := os.WriteFile(h, []byte(cliHarness), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("version: 1\nagent: {name: x, category: sometimes, command: [true]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	api := "http://127.0.0.1:1" // never contacted: every case fails before the first request
	base := map[string]string{"GITHUB_TOKEN": "ghs_x", "GITHUB_ACTIONS": "true", "RUNNER_TEMP": dir}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no harness", base, []string{"run"}, "--harness is required"},
		{"invalid harness", base, []string{"run", "--harness", bad, "--repo", "o/r", "--number", "1", "--api-url", api}, "agent.category: must be observation or mutation"},
		{"no repo", base, []string{"run", "--harness", h, "--number", "1", "--api-url", api}, "--repo"},
		{"no number", base, []string{"run", "--harness", h, "--repo", "o/r", "--api-url", api}, "--number"},
		{"no token", map[string]string{"GITHUB_ACTIONS": "true"}, []string{"run", "--harness", h, "--repo", "o/r", "--number", "1", "--api-url", api}, "--token-env GITHUB_TOKEN"},
		{"no comment author outside Actions", map[string]string{"GITHUB_TOKEN": "ghs_x"}, []string{"run", "--harness", h, "--repo", "o/r", "--number", "1", "--api-url", api}, "--comment-author"},
		{"unknown kind", base, []string{"run", "--harness", h, "--repo", "o/r", "--number", "1", "--kind", "epic", "--api-url", api}, "--kind"},
		{"no profile for kind", base, []string{"run", "--harness", h, "--repo", "o/r", "--number", "1", "--kind", "change_proposal", "--api-url", api}, "profiles.change_proposal"},
		{"bad immutability", base, []string{"run", "--harness", h, "--immutability", "maybe"}, "--immutability"},
		{"unknown forge", base, []string{"run", "--harness", h, "--forge", "bitbucket", "--repo", "o/r", "--number", "1"}, "--forge"},
		{"forgejo without api url", map[string]string{"FORGEJO_TOKEN": "x"}, []string{"run", "--harness", h, "--forge", "forgejo", "--repo", "o/r", "--number", "1"}, "--api-url"},
		{"gitlab without token", nil, []string{"run", "--harness", h, "--forge", "gitlab", "--repo", "g/p", "--number", "1", "--api-url", api}, "--token-env GITLAB_TOKEN"},
		{"malformed head sha", base, []string{"run", "--harness", h, "--repo", "o/r", "--number", "1", "--api-url", api, "--head-sha", "abc123"}, "--head-sha"},
		{"trees inside an artifacts dir", base, []string{"run", "--harness", h, "--repo", "o/r", "--number", "1", "--api-url", api, "--artifacts-dir", filepath.Dir(dir)}, "must lie outside --artifacts-dir " + filepath.Dir(dir)},
		{"empty artifacts dir", base, []string{"run", "--harness", h, "--artifacts-dir", ""}, "--artifacts-dir: must name a directory"},
		{"unreadable replay cassette", base, []string{"run", "--harness", h, "--repo", "o/r", "--number", "1", "--replay", filepath.Join(dir, "no-such-cassette")}, "--replay " + filepath.Join(dir, "no-such-cassette") + ": unreadable cassette"},
		{"replay cassette of another forge", base, []string{"run", "--harness", h, "--forge", "gitlab", "--repo", "g/p", "--number", "1", "--replay", "../../examples/replay/github-issue"}, `cassette was recorded for forge "github", not gitlab`},
		{"reconcile without agent", base, []string{"status", "reconcile", "--repo", "o/r", "--number", "1"}, "--agent"},
		{"status without subcommand", base, []string{"status"}, "reconcile"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.env, "", tc.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
				t.Errorf("stderr = %q, want one error naming %q", stderr, tc.want)
			}
			if strings.Contains(stderr, "ghs_x") {
				t.Error("the token reached stderr")
			}
		})
	}
}

// `forgectx run --replay DIR` end to end through the CLI: offline (no token, no CI variables),
// exit 0, and stdout is exactly the offline sink's three JSON lines — the ⏳ start comment,
// its completion edit and the receipt — while the job log goes to stderr.
func TestRunReplayPrintsWouldBePosts(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--replay", "../../examples/replay/github-issue", "--harness", "../../examples/harness/triage.yml",
		"--repo", "octo-org/Hello-World", "--number", "7", "--kind", "work_item", "--comment-author", "github-actions[bot]",
		"--tree-dir", dir, "--state-dir", filepath.Join(dir, "state")}
	if os.Geteuid() == 0 {
		args = append(args, "--agent-uid", "65534", "--agent-gid", "65534")
		for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	code, stdout, stderr := runCLI(t, map[string]string{"PATH": os.Getenv("PATH"), "HOME": dir}, "", args...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	wantPrefix := []string{
		`{"op":"create","id":"offline-1","body":"<!-- forgectx:status agent=triage -->\n⏳ `,
		`{"op":"update","id":"offline-1","body":"<!-- forgectx:status agent=triage -->\n✅ `,
		`{"op":"create","id":"offline-2","body":"<!-- forgectx:receipt v1 -->`,
	}
	if len(lines) != len(wantPrefix) {
		t.Fatalf("stdout has %d lines, want %d:\n%s", len(lines), len(wantPrefix), stdout)
	}
	for i, w := range wantPrefix {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("stdout line %d = %.120q, want prefix %q", i+1, lines[i], w)
		}
	}
	if !strings.Contains(stderr, "triaged") {
		t.Errorf("the agent's output did not reach the job log (stderr):\n%s", stderr)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "state" {
			t.Errorf("replayed run left %s in the tree dir", e.Name())
		}
	}
}

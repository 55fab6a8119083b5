package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/test/testnotice"
)

// helpPaths is every command and subcommand that has its own flag set. Top-level commands come
// from the registry, so a new one is covered without an edit here.
func helpPaths() [][]string {
	var paths [][]string
	for name := range commands {
		switch name {
		case "stage":
			for _, sub := range []string{"create", "verify-copy", "cleanup", "scavenge"} {
				paths = append(paths, []string{"stage", sub})
			}
		case "review-context":
			for _, sub := range []string{"acquire", "run"} {
				paths = append(paths, []string{"review-context", sub})
			}
		case "rework":
			paths = append(paths, []string{"rework", "input-gate"})
		case "status":
			paths = append(paths, []string{"status", "reconcile"})
		default:
			paths = append(paths, []string{name})
		}
	}
	sort.Slice(paths, func(i, j int) bool { return strings.Join(paths[i], " ") < strings.Join(paths[j], " ") })
	return paths
}

// flagHelpLine is one flag of Go's PrintDefaults: "  -name" then an optional placeholder.
var flagHelpLine = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)(?: (.*))?$`)

// Every flag's placeholder in --help is one word: Go's flag package turns the first
// `backquoted` text of a usage string into the placeholder, so a backquoted phrase printed
// `-relay review-context run` instead of `-relay SOCKET`.
func TestHelpPlaceholdersAreOneWord(t *testing.T) {
	for _, p := range helpPaths() {
		_, _, stderr := runCLI(t, nil, "", append(append([]string{}, p...), "--help")...)
		lines := flagHelpLine.FindAllStringSubmatch(stderr, -1)
		for _, m := range lines {
			if strings.ContainsAny(m[2], " \t") {
				t.Errorf("forgectx %s --help: -%s has the placeholder %q, want one word", strings.Join(p, " "), m[1], m[2])
			}
		}
	}
	_, _, stderr := runCLI(t, nil, "", "mcp", "--help")
	if !strings.Contains(stderr, "\n  -relay SOCKET\n") {
		t.Errorf("mcp --help does not show -relay SOCKET:\n%s", stderr)
	}
}

// run --help gives each forge's defaults, not only GitHub's: a GitLab or Forgejo user reading
// it learns where the repository, number, API URL, token and head come from in their CI.
func TestRunHelpNamesEachForgesDefaults(t *testing.T) {
	_, _, stderr := runCLI(t, nil, "", "run", "--help")
	usage := map[string]string{}
	var last string
	for _, line := range strings.Split(stderr, "\n") {
		if m := flagHelpLine.FindStringSubmatch(line); m != nil {
			last = m[1]
			continue
		}
		if last != "" {
			usage[last] += strings.TrimSpace(line) + " "
		}
	}
	want := map[string][]string{
		"repo":           {"$GITHUB_REPOSITORY", "$CI_MERGE_REQUEST_PROJECT_ID", "$CI_PROJECT_ID", "Forgejo"},
		"number":         {"GitHub", "$CI_MERGE_REQUEST_IID", "Forgejo"},
		"api-url":        {"$GITHUB_API_URL", "https://api.github.com", "$CI_API_V4_URL", "https://gitlab.com/api/v4", "/api/v1"},
		"token-env":      {"GITHUB_TOKEN", "GITLAB_TOKEN", "CI_JOB_TOKEN", "FORGEJO_TOKEN"},
		"head-sha":       {"$GITHUB_SHA", "$CI_COMMIT_SHA", "Forgejo"},
		"comment-author": {"github-actions[bot]", "GitLab and Forgejo"},
	}
	for flag, words := range want {
		for _, w := range words {
			if !strings.Contains(usage[flag], w) {
				t.Errorf("run --help: -%s does not mention %q: %q", flag, w, usage[flag])
			}
		}
	}
}

// A root run without --agent-uid is refused before anything is posted (exit 2), and
// docs/troubleshooting.md lists that exact message with its fix: a first run as root (sudo, a
// root container) meets it before any other.
func TestTroubleshootingListsTheRootWithoutAgentUIDMessage(t *testing.T) {
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "run as root (non-root)", "the message is given only when forgectx runs as root")
	}
	var out, errb bytes.Buffer
	args := []string{"run", "--replay", "../../examples/replay/github-issue", "--harness", "../../examples/harness/triage.yml",
		"--repo", "octo-org/Hello-World", "--number", "7", "--kind", "work_item", "--comment-author", "github-actions[bot]"}
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb, func(string) string { return "" }, func() []string { return nil })
	const prefix = "forgectx: run: configuration: "
	msg := ""
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.HasPrefix(l, prefix) {
			msg = strings.TrimPrefix(l, prefix)
		}
	}
	if code != exitUsage || msg == "" || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 with one configuration line and nothing posted", code, out.String(), errb.String())
	}
	doc, err := os.ReadFile("../../docs/troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "| `"+msg+"`") {
		t.Errorf("docs/troubleshooting.md does not list %q", msg)
	}
}

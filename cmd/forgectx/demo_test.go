package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// forgectx demo: no network, no token; writes the tree and prints records per source, gaps
// with usability, filter findings and the tree path.
func TestDemoWritesTreeAndPrintsReadableSummary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ctx")
	code, stdout, stderr := runCLI(t, nil, "", "--log-level", "disabled", "demo", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"records per source:", "comments", "authorization_failed", "unusable",
		"redact.github-token", "unicode.zero-width", "index.json sha256: ", "tree: " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if fi, err := os.Stat(filepath.Join(out, "index.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("index.json: %v", err)
	}
	// The summary carries codes and counts, never content.
	if strings.Contains(stdout, "ghp_") || strings.Contains(stdout, "Ignore all") {
		t.Error("summary leaks content")
	}
	// Refuses a non-empty directory.
	if code, _, _ := runCLI(t, nil, "", "--log-level", "disabled", "demo", "--out", out); code == exitOK {
		t.Error("demo wrote into a non-empty directory")
	}
}

// Without --out the tree goes to a fresh temporary directory that is removed before the
// command exits: `go run ./cmd/forgectx demo`, the README's first command, leaves no
// forgectx-demo-* directory behind.
func TestDemoWithoutOutLeavesNothingBehind(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	code, stdout, stderr := runCLI(t, nil, "", "--log-level", "disabled", "demo")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "index.json sha256: ") || !strings.HasSuffix(stdout, "tree: removed (it was written to a temporary directory; --out DIR keeps it)\n") {
		t.Errorf("summary does not end by saying the temporary tree was removed:\n%s", stdout)
	}
	if ents, err := os.ReadDir(tmp); err != nil || len(ents) != 0 {
		t.Fatalf("the temporary directory holds %v after demo (%v), want nothing", ents, err)
	}
}

func TestDemoRejectsArguments(t *testing.T) {
	if code, _, _ := runCLI(t, nil, "", "demo", "extra"); code != exitUsage {
		t.Fatalf("exit %d, want 2", code)
	}
	// A non-empty --out is a usage error, as for forgectx snapshot; nothing is written into it.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := runCLI(t, nil, "", "demo", "--out", dir); code != exitUsage {
		t.Fatalf("non-empty --out: exit %d, want 2", code)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("demo wrote into a non-empty --out")
	}
}

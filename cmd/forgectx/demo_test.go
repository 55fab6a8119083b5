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

func TestDemoDefaultsToAFreshTemporaryDirectory(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "", "--log-level", "disabled", "demo")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	i := strings.LastIndex(stdout, "tree: ")
	if i < 0 {
		t.Fatalf("no tree path:\n%s", stdout)
	}
	dir := strings.TrimSpace(stdout[i+len("tree: "):])
	t.Cleanup(func() { os.RemoveAll(dir) })
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("tree dir %s: %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "views", "timeline.order")); err != nil {
		t.Fatal(err)
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

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// demoTree writes the `forgectx demo` tree and returns its directory and the digest of its
// root index as printed by `forgectx verify`.
func demoTree(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ctx")
	if code, _, errOut := runCLI(t, nil, "", "demo", "--out", dir); code != exitOK {
		t.Fatalf("demo: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCLI(t, nil, "", "verify", dir)
	if code != exitOK || !strings.HasPrefix(out, "ok files=") {
		t.Fatalf("verify demo: exit %d\n%s%s", code, out, errOut)
	}
	i := strings.Index(out, "index_sha256=")
	return dir, strings.TrimSpace(out[i+len("index_sha256="):])
}

func TestVerifyCLI(t *testing.T) {
	dir, digest := demoTree(t)
	if code, out, _ := runCLI(t, nil, "", "verify", dir, "--index-sha256", digest); code != exitOK || !strings.Contains(out, "records=17") {
		t.Fatalf("with retained digest: exit %d %s", code, out)
	}
	// A digest is a digest in either case (sha256sum prints lowercase, some tools uppercase).
	if code, out, _ := runCLI(t, nil, "", "verify", dir, "--index-sha256", strings.ToUpper(digest)); code != exitOK {
		t.Fatalf("uppercase retained digest: exit %d %s", code, out)
	}
	code, out, _ := runCLI(t, nil, "", "verify", "--format", "json", dir)
	var rep struct {
		Violations []any `json:"violations"`
		Files      int   `json:"files"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Files != 33 || rep.Violations == nil {
		t.Fatalf("json: exit %d %s", code, out)
	}
	code, out, errOut := runCLI(t, nil, "", "verify", dir, "--index-sha256", strings.Repeat("0", 64))
	if code != exitFailed || !strings.HasPrefix(out, "index.json: index_digest_mismatch: ") || !strings.Contains(errOut, "forgectx: verify ") {
		t.Fatalf("wrong digest: exit %d\n%s%s", code, out, errOut)
	}
	// Tamper: one byte appended to the timeline view.
	f, _ := os.OpenFile(filepath.Join(dir, "views/timeline.order"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("x")
	f.Close()
	os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("x"), 0o600)
	code, out, _ = runCLI(t, nil, "", "verify", dir)
	want := "extra.txt: extra_file: present but not listed in the manifest\nviews/timeline.order: bytes_mismatch: "
	if code != exitFailed || !strings.HasPrefix(out, want) {
		t.Fatalf("tampered: exit %d\n%s", code, out)
	}
}

func TestVerifyCLIUsage(t *testing.T) {
	for _, args := range [][]string{{"verify"}, {"verify", "a", "b"}, {"verify", "--format", "yaml", "x"}, {"verify", "--bogus", "x"}} {
		if code, _, _ := runCLI(t, nil, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, errOut := runCLI(t, nil, "", "verify", filepath.Join(t.TempDir(), "missing")); code != exitFailed || !strings.Contains(errOut, "forgectx: verify ") {
		t.Errorf("missing dir: exit %d %s", code, errOut)
	}
	for _, bad := range []string{"xyz", strings.Repeat("g", 64), strings.Repeat("a", 63)} {
		if code, _, _ := runCLI(t, nil, "", "verify", t.TempDir(), "--index-sha256", bad); code != exitUsage {
			t.Errorf("malformed digest %q: exit %d, want %d", bad, code, exitUsage)
		}
	}
}

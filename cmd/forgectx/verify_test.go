package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
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

// rewriteIndex edits the tree's decoded index.json, then rewrites every files[] size and
// digest from disk and the index canonically: a tree as another producer would write it.
func rewriteIndex(t *testing.T, dir string, mutate func(m map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	mutate(m)
	for _, f := range m["files"].([]any) {
		e := f.(map[string]any)
		b, err := os.ReadFile(filepath.Join(dir, e["path"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		e["bytes"], e["sha256"] = len(b), canon.SHA256Hex(b)
	}
	out, err := canon.JSON(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyProducerCheckCLI is the documented producer-conformance example
// (docs/consumer.md, "Producer rules"): a tree from `snapshot --from-acquisition` passes
// `verify --producer-check`; the same tree under another producer's filter_version is refused
// by the default (consumer) mode only; a zero-width space left in a comment body is refused by
// both, with its rule code.
func TestVerifyProducerCheckCLI(t *testing.T) {
	fx := "../../test/fixtures/acquisition/change-proposal/"
	dir := filepath.Join(t.TempDir(), "ctx")
	if code, _, errOut := runCLI(t, nil, "", "snapshot", "--from-acquisition", fx+"acquisition.json", "--profile", fx+"profile.json",
		"--category", "observation", "--bots", fx+"bots.json", "--out", dir); code != exitOK {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	if code, out, errOut := runCLI(t, nil, "", "verify", "--producer-check", dir); code != exitOK || !strings.HasPrefix(out, "ok files=") {
		t.Fatalf("producer-check of an assembled tree: exit %d\n%s%s", code, out, errOut)
	}
	rewriteIndex(t, dir, func(m map[string]any) { m["filter_version"] = "acme-filter-2.0" })
	if code, out, _ := runCLI(t, nil, "", "verify", dir); code != exitFailed || !strings.HasPrefix(out, "index.json: unsupported_filter_version: ") {
		t.Fatalf("default mode, foreign filter_version: exit %d\n%s", code, out)
	}
	if code, out, errOut := runCLI(t, nil, "", "verify", dir, "--producer-check"); code != exitOK {
		t.Fatalf("producer-check, foreign filter_version: exit %d\n%s%s", code, out, errOut)
	}
	const comment = "records/20260901T101200000000000Z-a91e751b2dfb1023c38cfa127324fca5a42377ffee15c3db69f68545949f6b74.md"
	b, err := os.ReadFile(filepath.Join(dir, comment))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("\n\n")) + 2
	b = append(append(append([]byte{}, b[:i]...), "\u200b"...), b[i:]...)
	if err := os.WriteFile(filepath.Join(dir, comment), b, 0o600); err != nil {
		t.Fatal(err)
	}
	rewriteIndex(t, dir, func(map[string]any) {})
	code, out, errOut := runCLI(t, nil, "", "verify", "--producer-check", "--format", "json", dir)
	var rep struct {
		Violations []struct{ Path, Rule string } `json:"violations"`
	}
	if code != exitFailed || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Violations) != 1 ||
		rep.Violations[0].Path != comment || rep.Violations[0].Rule != "unicode_floor" {
		t.Fatalf("producer-check, floor rune in a body: exit %d\n%s%s", code, out, errOut)
	}
}

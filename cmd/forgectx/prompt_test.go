package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestPromptCLI(t *testing.T) {
	dir, digest := demoTree(t)
	code, out, errOut := runCLI(t, nil, "", "prompt", dir, "--index-sha256", digest)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var blocks []struct{ Type, Text string }
	if err := json.Unmarshal([]byte(out), &blocks); err != nil || len(blocks) < 14 {
		t.Fatalf("json blocks: %v (%d)", err, len(blocks))
	}
	for _, b := range blocks {
		if b.Type != "text" || !strings.HasPrefix(b.Text, "UNTRUSTED SNAPSHOT DATA (") {
			t.Fatalf("block not marked: %.80q", b.Text)
		}
	}
	if !strings.Contains(blocks[0].Text, "(record records/00000000T000000000000000Z-") {
		t.Errorf("first block is not the entity record: %.120q", blocks[0].Text)
	}
	code, out, _ = runCLI(t, nil, "", "prompt", "--view", "unresolved-review", "--format", "text", dir)
	if code != exitOK || strings.Count(out, "UNTRUSTED SNAPSHOT DATA (record ") != 2 {
		t.Fatalf("unresolved-review text: exit %d\n%s", code, out)
	}
	// An unverified tree is never rendered.
	os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("x"), 0o600)
	code, out, errOut = runCLI(t, nil, "", "prompt", dir)
	if code != exitFailed || out != "" || !strings.Contains(errOut, "refusing to render an unverified tree") || !strings.Contains(errOut, "extra.txt: extra_file") {
		t.Fatalf("unverified: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
}

func TestPromptCLIUsage(t *testing.T) {
	for _, args := range [][]string{{"prompt"}, {"prompt", "x", "--view", "nope"}, {"prompt", "x", "--view", "reviews/../x"}, {"prompt", "x", "--view", "threads/../../etc/passwd"}, {"prompt", "x", "--index-sha256", "nothex"}, {"prompt", "x", "--format", "yaml"}} {
		if code, _, _ := runCLI(t, nil, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	dir, _ := demoTree(t)
	if code, _, errOut := runCLI(t, nil, "", "prompt", dir, "--view", "reviews/"+strings.Repeat("0", 64)); code != exitFailed || !strings.Contains(errOut, "invalid view") {
		t.Errorf("absent review view: exit %d %s", code, errOut)
	}
}

// --logs: both by default (a check-digest block before the check blocks, the log kept),
// digest (no log block), full (no digest block); anything else is a usage error naming the
// flag and its values.
func TestPromptCLILogs(t *testing.T) {
	dir, digest := demoTree(t)
	count := func(args ...string) (digests, logs int) {
		t.Helper()
		code, out, errOut := runCLI(t, nil, "", append([]string{"prompt", dir, "--format", "text", "--index-sha256", digest}, args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		digests = strings.Count(out, "UNTRUSTED SNAPSHOT DATA (check-digest checks/")
		logs = len(regexp.MustCompile(`UNTRUSTED SNAPSHOT DATA \(check checks/[0-9a-f]{64}/log\.txt, sha256`).FindAllString(out, -1))
		if digests > 0 && strings.Index(out, "(check-digest ") > strings.Index(out, "(check checks/") {
			t.Errorf("%v: the digest block does not come before the check blocks", args)
		}
		return digests, logs
	}
	for _, tc := range []struct {
		args          []string
		digests, logs int
	}{{nil, 1, 1}, {[]string{"--logs", "both"}, 1, 1}, {[]string{"--logs", "digest"}, 1, 0}, {[]string{"--logs", "full"}, 0, 1}} {
		if d, l := count(tc.args...); d != tc.digests || l != tc.logs {
			t.Errorf("%v: %d digest and %d log blocks, want %d and %d", tc.args, d, l, tc.digests, tc.logs)
		}
	}
	for _, bad := range []string{"", "none", "FULL"} {
		code, out, errOut := runCLI(t, nil, "", "prompt", dir, "--logs", bad)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "--logs must be digest, full or both") {
			t.Errorf("--logs %q: exit %d, stderr %q", bad, code, errOut)
		}
	}
}

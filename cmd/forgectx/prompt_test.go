package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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

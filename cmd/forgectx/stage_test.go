package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func kv(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("not key=value: %q", line)
		}
		m[k] = v
	}
	return m
}

func TestStageCLILifecycle(t *testing.T) {
	dir, digest := demoTree(t)
	base, err := os.MkdirTemp("", "forgectx-stage-cli-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o755)
	t.Cleanup(func() { os.RemoveAll(base) })
	state := filepath.Join(t.TempDir(), "state")
	code, out, errOut := runCLI(t, nil, "", "stage", "create", "--from", dir, "--index-sha256", digest, "--base", base, "--state-dir", state)
	if code != exitOK {
		t.Fatalf("create: exit %d %s", code, errOut)
	}
	c := kv(t, out)
	if c["index_sha256"] != digest || !strings.HasPrefix(c["host_dir"], base) || len(c["id"]) != 32 {
		t.Fatalf("create output %v", c)
	}
	if os.Geteuid() == 0 {
		code, out, errOut = runCLI(t, nil, "", "stage", "verify-copy", "--id", c["id"], "--state-dir", state, "--agent-uid", "65534", "--agent-gid", "65534")
		if code != exitOK {
			t.Fatalf("verify-copy: exit %d %s", code, errOut)
		}
		s := kv(t, out)
		if s["mode"] != "ownership" || s["files"] != "33" || s["index_sha256"] != digest {
			t.Fatalf("verify-copy output %v", s)
		}
		fi, err := os.Stat(s["sandbox_dir"])
		if err != nil || fi.Mode().Perm() != 0o555 {
			t.Fatalf("sandbox dir: %v %v", fi.Mode(), err)
		}
	}
	code, out, _ = runCLI(t, nil, "", "stage", "scavenge", "--state-dir", state)
	if code != exitOK || out != "scanned=1 live=1 removed=0 unknown=0 errors=0\n" {
		t.Fatalf("scavenge: exit %d %q", code, out)
	}
	for i := 0; i < 2; i++ { // idempotent: the second run finds nothing and succeeds
		if code, _, errOut := runCLI(t, nil, "", "stage", "cleanup", "--id", c["id"], "--state-dir", state); code != exitOK {
			t.Fatalf("cleanup %d: exit %d %s", i+1, code, errOut)
		}
	}
	for _, p := range []string{c["host_dir"], c["sandbox_dir"], filepath.Join(state, c["id"])} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s left after cleanup", p)
		}
	}
}

func TestStageCLIRefusals(t *testing.T) {
	dir, _ := demoTree(t)
	state := filepath.Join(t.TempDir(), "state")
	ws := t.TempDir()
	env := map[string]string{"GITHUB_WORKSPACE": ws}
	code, _, errOut := runCLI(t, env, "", "stage", "create", "--from", dir, "--base", ws, "--state-dir", state)
	if code != exitFailed || !strings.Contains(errOut, "GITHUB_WORKSPACE") {
		t.Fatalf("create inside the workspace: exit %d %s", code, errOut)
	}
	code, _, errOut = runCLI(t, nil, "", "stage", "create", "--from", dir, "--base", t.TempDir(), "--state-dir", state)
	if code != exitOK {
		t.Fatalf("create: exit %d %s", code, errOut)
	}
	// Without root and an agent identity, nor a bind mount in the unprivileged case, the
	// ownership mode cannot be enforced: verify-copy aborts with a clear error.
	code, out, _ := runCLI(t, nil, "", "stage", "scavenge", "--state-dir", state)
	if code != exitOK || !strings.HasPrefix(out, "scanned=1") {
		t.Fatalf("scavenge: %d %s", code, out)
	}
	for _, args := range [][]string{{"stage"}, {"stage", "bogus"}, {"stage", "create"}, {"stage", "cleanup"}, {"stage", "verify-copy"}, {"stage", "verify-copy", "--id", "x", "--mode", "magic"}, {"stage", "scavenge", "extra"}} {
		if code, _, _ := runCLI(t, nil, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestStageCLIVerifyCopyAbortsWithoutImmutability(t *testing.T) {
	dir, _ := demoTree(t)
	state := filepath.Join(t.TempDir(), "state")
	code, out, errOut := runCLI(t, nil, "", "stage", "create", "--from", dir, "--base", t.TempDir(), "--state-dir", state)
	if code != exitOK {
		t.Fatalf("create: %d %s", code, errOut)
	}
	id := kv(t, out)["id"]
	code, _, errOut = runCLI(t, nil, "", "stage", "verify-copy", "--id", id, "--state-dir", state, "--mode", "ownership")
	if code != exitFailed || !strings.Contains(errOut, "agent immutability cannot be enforced") || !strings.Contains(errOut, "aborting before the agent launches") {
		t.Fatalf("verify-copy without an agent identity: exit %d %s", code, errOut)
	}
	runCLI(t, nil, "", "stage", "cleanup", "--id", id, "--state-dir", state)
}

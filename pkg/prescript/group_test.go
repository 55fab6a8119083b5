package prescript_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forgectx/forgectx/pkg/prescript"
)

// alive reports whether pid is a live process (a zombie waiting for a reaper counts as gone).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}

// Issue #20 item 8: a pre-script's background child (`(sleep 60)&`) survived the script. The
// script's whole process group now ends with it — promptly, not after the stream WaitDelay —
// whatever the decision.
func TestBackgroundChildrenDieWithTheScript(t *testing.T) {
	requireBash(t)
	for _, exit := range []string{"0", "78", "1"} {
		t.Run("exit "+exit, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "child.pid")
			script := "(sleep 60) & echo $! > " + pidFile + "; exit " + exit
			start := time.Now()
			_, _ = prescript.Run(context.Background(), prescript.Options{
				RunDir: dir, Command: []string{"bash", "-c", script}, Env: []string{"PATH=" + os.Getenv("PATH")},
				WaitDelay: 20 * time.Second, Timeout: time.Minute,
			})
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Run took %s: the child held the streams until WaitDelay", d)
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			deadline := time.Now().Add(5 * time.Second)
			for alive(pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("background child %d outlived the pre-script", pid)
			}
		})
	}
}

// Issue #20 item 8: the live log (the script's own stdout and stderr copied to the job log)
// went out unredacted — `echo $MY_TOKEN` printed the token. It now passes the same redaction
// as the diagnostics.
func TestLiveLogIsRedacted(t *testing.T) {
	requireBash(t)
	const token = "s3cr3t-value-of-my-token-0123456789"
	var stdout, stderr bytes.Buffer
	dir := t.TempDir()
	_, err := prescript.Run(context.Background(), prescript.Options{
		RunDir: dir, Command: []string{"bash", "-c", `echo "out $MY_TOKEN"; echo "err $MY_TOKEN ghp_abcdefghijklmnopqrstuvwxyz0123456789" >&2; printf 'tail %s' "$MY_TOKEN"`},
		Env:    []string{"PATH=" + os.Getenv("PATH"), "MY_TOKEN=" + token},
		Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	log := stdout.String() + stderr.String()
	if strings.Contains(log, token) || strings.Contains(log, "ghp_abcdefghijklmnopqrstuvwxyz0123456789") {
		t.Fatalf("live log carries a secret: %q", log)
	}
	for _, want := range []string{"out [REDACTED:", "err [REDACTED:", "tail [REDACTED:"} {
		if !strings.Contains(log, want) {
			t.Errorf("live log %q lacks %q", log, want)
		}
	}
}

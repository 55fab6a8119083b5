package prescript_test

import (
	"bytes"
	"context"
	"errors"
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

// Regression: a pre-script's background child (`(sleep 60)&`) survived the script. The
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
			requireGone(t, pidFile, "outlived the pre-script")
		})
	}
}

// Regression: the live log (the script's own stdout and stderr copied to the job log)
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

// Regression: a cancelled pre-script was SIGKILLed outright. Its process group now gets SIGTERM
// first (a trap can finish its writes; the result is still "interrupted", whatever it exits
// with), then SIGKILL after KillGrace for a group that ignores SIGTERM.
func TestCancelSendsSIGTERMThenSIGKILLAfterGrace(t *testing.T) {
	requireBash(t)
	const grace = 700 * time.Millisecond
	cases := []struct {
		name, script string
		// termFile: the trap ran; killed: the group needed the SIGKILL (it outlived the grace).
		termFile, killed bool
	}{
		{"traps SIGTERM and exits 0", `trap 'echo term > "$D/term"; exit 0' TERM; (sleep 60) & echo $! > "$D/child.pid"; echo > "$D/started"; while :; do sleep 0.05; done`, true, false},
		{"ignores SIGTERM", `trap '' TERM; (sleep 60) & echo $! > "$D/child.pid"; echo > "$D/started"; while :; do sleep 0.05; done`, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for !fileExists(filepath.Join(dir, "started")) {
					time.Sleep(10 * time.Millisecond)
				}
				cancel()
			}()
			var began time.Time
			done := make(chan struct{})
			var err error
			go func() {
				defer close(done)
				_, err = prescript.Run(ctx, prescript.Options{
					RunDir: dir, Command: []string{"bash", "-c", tc.script}, Env: []string{"PATH=" + os.Getenv("PATH"), "D=" + dir},
					KillGrace: grace, WaitDelay: 20 * time.Second, Timeout: time.Minute,
				})
			}()
			for !fileExists(filepath.Join(dir, "started")) {
				time.Sleep(5 * time.Millisecond)
			}
			began = time.Now()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("Run did not return after the cancellation")
			}
			took := time.Since(began)
			var hf *prescript.HardFailure
			if !errors.As(err, &hf) || hf.TimedOut || !strings.Contains(hf.Diagnostic, "interrupted") {
				t.Fatalf("Run = %v; want an interrupted hard failure", err)
			}
			if got := fileExists(filepath.Join(dir, "term")); got != tc.termFile {
				t.Errorf("SIGTERM trap ran = %v, want %v", got, tc.termFile)
			}
			if tc.killed && took < grace {
				t.Errorf("a group ignoring SIGTERM was gone after %s, before the %s grace: not SIGTERM first", took, grace)
			}
			if !tc.killed && took >= grace {
				t.Errorf("a script exiting on SIGTERM took %s (grace %s)", took, grace)
			}
			if took > grace+5*time.Second {
				t.Errorf("Run took %s after the cancellation: no SIGKILL after the grace", took)
			}
			requireGone(t, filepath.Join(dir, "child.pid"), "outlived the cancelled pre-script")
		})
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// requireGone waits up to 5 s for the process whose PID pidFile holds to be gone, else kills it
// and fails with "child PID <what>".
func requireGone(t *testing.T, pidFile, what string) {
	t.Helper()
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
		t.Fatalf("child %d %s", pid, what)
	}
}

//go:build linux

package procgroup_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/platform/procgroup"
)

// alive reports whether the process whose PID is written in file still runs.
func alive(t *testing.T, file string) bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for _, c := range strings.TrimSpace(string(b)) {
		pid = pid*10 + int(c-'0')
	}
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A killed orphan stays a zombie until its new parent reaps it: that is not running.
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i < 0 || i+2 >= len(st) || st[i+2] != 'Z'
}

// A cancelled child's whole group gets SIGTERM first (a trap can run), then SIGKILL after the
// grace; a background child of the group does not outlive it.
func TestRunCancelTermsThenKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidf, trapped := filepath.Join(dir, "bg"), filepath.Join(dir, "trapped")
	script := "(trap '' TERM; sleep 60) & echo $! > " + pidf + "; trap 'touch " + trapped + "' TERM; echo ready; while :; do sleep 0.05; done"
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	w := &notify{w: &out, ready: make(chan struct{})}
	go func() { <-w.ready; cancel() }()
	start := time.Now()
	r := procgroup.Run(ctx, procgroup.Spec{Argv: []string{"sh", "-c", script}, Stdout: w, Grace: 500 * time.Millisecond, WaitDelay: time.Second})
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %s", d)
	}
	if !r.Stopped || !errors.Is(r.CtxErr, context.Canceled) || r.ExitCode != -1 {
		t.Fatalf("got %+v, want stopped, cancelled, killed", r)
	}
	if _, err := os.Stat(trapped); err != nil {
		t.Error("the child never received SIGTERM before SIGKILL")
	}
	time.Sleep(100 * time.Millisecond)
	if alive(t, pidf) {
		t.Error("the background child outlived the group")
	}
}

// notify closes ready on the first write.
type notify struct {
	w     *bytes.Buffer
	ready chan struct{}
	once  bool
}

func (n *notify) Write(p []byte) (int, error) {
	if !n.once {
		n.once = true
		close(n.ready)
	}
	return n.w.Write(p)
}

// The timeout is the child's own: it ends with DeadlineExceeded; without a grace the group
// is killed at once.
func TestRunTimeoutKillsWithoutGrace(t *testing.T) {
	start := time.Now()
	r := procgroup.Run(context.Background(), procgroup.Spec{Argv: []string{"sh", "-c", "trap '' TERM; sleep 30"}, Timeout: 200 * time.Millisecond})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s: the TERM-ignoring child was not killed at once", d)
	}
	if !r.Stopped || !errors.Is(r.CtxErr, context.DeadlineExceeded) || r.ExitCode != -1 {
		t.Fatalf("got %+v", r)
	}
}

// A child that exits normally leaves no straggler: the group is killed once it is reaped; its
// exit code and streams come back, and its environment is exactly Env.
func TestRunExitKillsStragglersAndKeepsTheCode(t *testing.T) {
	pidf := filepath.Join(t.TempDir(), "bg")
	var out bytes.Buffer
	r := procgroup.Run(context.Background(), procgroup.Spec{Argv: []string{"/bin/sh", "-c", "(sleep 60) >/dev/null 2>&1 & echo $! > " + pidf + "; echo \"$ONLY${HOME:-nohome}\"; exit 3"},
		Env: []string{"ONLY=x"}, Stdout: &out, Grace: time.Second})
	if r.ExitCode != 3 || r.Stopped || r.CtxErr != nil || r.StartErr != nil {
		t.Fatalf("got %+v", r)
	}
	if out.String() != "xnohome\n" {
		t.Errorf("stdout %q", out.String())
	}
	time.Sleep(100 * time.Millisecond)
	if alive(t, pidf) {
		t.Error("the background child outlived the leader")
	}
}

// KillGroupOnExit: a background child holding stdout does not keep the wait busy.
func TestRunKillGroupOnExit(t *testing.T) {
	var out bytes.Buffer
	start := time.Now()
	r := procgroup.Run(context.Background(), procgroup.Spec{Argv: []string{"sh", "-c", "(sleep 60) & echo started"}, Stdout: &out, KillGroupOnExit: true})
	if d := time.Since(start); d > 10*time.Second || r.ExitCode != 0 || out.String() != "started\n" {
		t.Fatalf("took %s, got %+v, out %q", d, r, out.String())
	}
}

// A context that already ended starts nothing; a missing program is a start error.
func TestRunStartsNothingOnAnEndedContextOrMissingProgram(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := procgroup.Run(ctx, procgroup.Spec{Argv: []string{"sh", "-c", "touch " + marker}})
	if !errors.Is(r.StartErr, context.Canceled) || r.State != nil {
		t.Fatalf("got %+v", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the child ran")
	}
	r = procgroup.Run(context.Background(), procgroup.Spec{Argv: []string{"forgectx-no-such-program"}})
	if !errors.Is(r.StartErr, exec.ErrNotFound) || r.ExitCode != -1 {
		t.Fatalf("got %+v", r)
	}
}

// The privilege check: with Identity a set-ID executable is refused before anything starts;
// with Unprivileged a started child holding UID 0 is killed.
func TestRunPrivilegeCheck(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent")
	if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch \"$0.ran\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	r := procgroup.Run(context.Background(), procgroup.Spec{Argv: []string{p}, Identity: &procgroup.Identity{UID: 65534, GID: 65534}})
	var ce *procgroup.AgentCapabilityError
	if !errors.As(r.Refused, &ce) || r.State != nil {
		t.Fatalf("got %+v, want the set-ID refusal", r)
	}
	if os.Geteuid() != 0 {
		t.Skip("the UID 0 refusal needs root")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	r = procgroup.Run(context.Background(), procgroup.Spec{Argv: []string{"sh", "-c", "sleep 1; touch " + marker}, Unprivileged: true, Grace: time.Second})
	if r.CheckErr == nil || !strings.Contains(r.CheckErr.Error(), "UID 0") || r.ExitCode != -1 {
		t.Fatalf("got %+v, want the UID 0 refusal", r)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the refused child kept running")
	}
}

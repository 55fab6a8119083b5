package reviewrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/review/reviewmcp"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/test/testnotice"
)

func harnessWith(env, secrets []string) *harness.Harness {
	return &harness.Harness{Agent: harness.Agent{Env: env}, Secrets: secrets}
}

func TestEngineIdentity(t *testing.T) {
	for _, tc := range []struct {
		uid, gid, euid int
		want           string // "" nil credential, "err" a configuration error, else "uid:gid"
	}{
		{0, 0, 0, "65532:65532"},
		{1000, 1001, 0, "1000:1001"},
		{1000, 0, 0, "err"},
		{-1, -1, 0, "err"},
		{0, 0, 1000, ""},
		{1000, 1000, 1000, "err"},
	} {
		c, err := engineIdentity(tc.uid, tc.gid, tc.euid)
		got := ""
		switch {
		case err != nil:
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("%+v: %v is not a configuration error", tc, err)
			}
			got = "err"
		case c != nil:
			if len(c.Groups) != 0 || c.Groups == nil {
				t.Fatalf("%+v: supplementary groups %v, want none (an empty list)", tc, c.Groups)
			}
			got = fmt.Sprintf("%d:%d", c.Uid, c.Gid)
		}
		if got != tc.want {
			t.Errorf("engineIdentity(%d, %d, euid %d) = %q, want %q", tc.uid, tc.gid, tc.euid, got, tc.want)
		}
	}
}

// The relay serves only a peer with the engine's UID: as root, a connection from this (root)
// process is closed unserved; the control (engine identity = this UID) reaches the server
// (which refuses the empty configuration — it was served).
func TestRelayRefusesOtherPeers(t *testing.T) {
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "engine-identity tests (non-root)", "needs root (the peer must differ from the engine identity)")
	}
	for _, tc := range []struct {
		uid    uint32
		served bool
	}{{DefaultEngineID, false}, {0, true}} {
		name := fmt.Sprintf("@forgectx-review-test-%d-%d", os.Getpid(), tc.uid)
		var logs bytes.Buffer
		rs, err := serveRelay(context.Background(), name, &syscall.Credential{Uid: tc.uid, Gid: tc.uid}, reviewmcp.Config{}, zerolog.New(&logs))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n")
		// The server may close with the request unread (a reset): the log says what happened.
		_ = Relay(context.Background(), name, in, &out)
		rs.close()
		refused := strings.Contains(logs.String(), "refused a peer")
		served := strings.Contains(logs.String(), "mcp_session_failed")
		if refused == tc.served || served != tc.served || (!tc.served && out.Len() != 0) {
			t.Fatalf("engine uid %d: refused=%v served=%v out=%q", tc.uid, refused, served, out.String())
		}
	}
}

// The started engine's privileges are checked (procgroup.CheckProcess): an engine that still
// holds UID 0 is killed and the start is an error, before it can finish its work.
func TestRunEngineRefusesAPrivilegedEngine(t *testing.T) {
	if os.Geteuid() != 0 {
		testnotice.Skip(t, "engine-identity tests (non-root)", "needs root to run the engine as another user")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	r := runEngine(context.Background(), engineSpec{argv: []string{"/bin/sh", "-c", "sleep 1; touch " + marker}, env: []string{"PATH=/usr/bin:/bin"},
		dir: "/", stdout: io.Discard, stderr: io.Discard, timeout: 10 * time.Second, grace: time.Second,
		cred: &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{}}})
	if r.Err == nil || !strings.Contains(r.Err.Error(), "UID 0") {
		t.Fatalf("got %+v, want the UID 0 refusal", r)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the refused engine kept running")
	}
}

// The engine's exit ends its run: a background child it leaves holding stdout is killed with
// the engine's process group, so the run neither waits for it nor times out.
func TestRunEngineEndsWhenTheEngineExits(t *testing.T) {
	var out bytes.Buffer
	start := time.Now()
	r := runEngine(context.Background(), engineSpec{argv: []string{"/bin/sh", "-c", "(sleep 60) & echo done"}, env: []string{"PATH=/usr/bin:/bin"},
		dir: "/", stdout: &out, stderr: io.Discard, timeout: 20 * time.Second, grace: time.Second})
	if r.Err != nil || r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("got %+v, want a clean exit 0", r)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the run waited %s for the engine's background child", took)
	}
	if out.String() != "done\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

// An engine that is not on PATH is reported as not found, with or without a credential to
// drop to (before, the credential's executable check reported a stat of the bare name).
func TestRunEngineReportsAMissingEngine(t *testing.T) {
	for _, cred := range []*syscall.Credential{nil, {Uid: 65534, Gid: 65534, Groups: []uint32{}}} {
		r := runEngine(context.Background(), engineSpec{argv: []string{"forgectx-no-such-engine"}, env: []string{"PATH=/usr/bin:/bin"},
			dir: "/", stdout: io.Discard, stderr: io.Discard, timeout: 10 * time.Second, grace: time.Second, cred: cred})
		if !errors.Is(r.Err, exec.ErrNotFound) || r.ExitCode != -1 {
			t.Fatalf("cred %v: got %+v, want exec.ErrNotFound", cred != nil, r)
		}
	}
}

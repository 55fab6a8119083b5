package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The first signal cancels the command context with the signal as cause; a command still
// running after the grace period ends the process with exit 1; a second signal changes
// nothing (the command finishing its cancellation steps is not cut short); a command that
// finishes in time is left alone.
func TestWatchSignals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		second   bool
		finishes bool
		wantExit int
		wantMsg  string
	}{
		{name: "grace runs out", wantExit: exitFailed, wantMsg: "did not stop within"},
		{name: "second signal absorbed", second: true, finishes: true, wantExit: -1},
		{name: "command stops in time", finishes: true, wantExit: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 2)
			ctx, cancel := context.WithCancelCause(context.Background())
			done := make(chan struct{})
			exited := make(chan int, 1)
			var errb bytes.Buffer
			grace := 200 * time.Millisecond
			returned := make(chan struct{})
			go func() {
				watchSignals(sigs, cancel, done, &errb, grace, func(c int) { exited <- c })
				close(returned)
			}()
			sigs <- syscall.SIGTERM
			<-ctx.Done()
			if got := interruptedBy(ctx); got != syscall.SIGTERM {
				t.Fatalf("cause %v; want SIGTERM", got)
			}
			if tc.second {
				sigs <- os.Interrupt
				time.Sleep(50 * time.Millisecond) // within the grace: no exit yet
			}
			if tc.finishes {
				close(done)
			}
			<-returned
			select {
			case c := <-exited:
				if c != tc.wantExit || !strings.Contains(errb.String(), tc.wantMsg) {
					t.Fatalf("exit %d, stderr %q; want %d and %q", c, errb.String(), tc.wantExit, tc.wantMsg)
				}
			default:
				if tc.wantExit != -1 {
					t.Fatalf("no exit; want %d", tc.wantExit)
				}
			}
		})
	}
}

// A command blocked reading stdin (a pipe nobody writes to) stops when the signal cancels its
// context, and exits 1 even when it would have reported success (distill's fail-safe {}).
func TestSignalStopsACommandBlockedOnStdin(t *testing.T) {
	dir := t.TempDir()
	profile := dir + "/profile.json"
	if err := os.WriteFile(profile, []byte(`{"entity_kind":"work_item","included_sources":["comments","entity"],"record_selection":"oldest","check_log_selection":"none","bounds":{"max_records_per_source":5,"max_source_bytes":4096,"max_record_bytes":1024,"max_log_bytes":1024,"max_metadata_string_bytes":64,"max_labels":5}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"distill", "--payload", "-"},
		{"filter"},
		{"snapshot", "--from-acquisition", "-", "--profile", profile, "--category", "observation", "--out", dir + "/out"},
	} {
		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(100*time.Millisecond, func() { cancel(&interruptedError{sig: syscall.SIGTERM}) })
		type result struct {
			code   int
			stderr string
		}
		done := make(chan result, 1)
		go func() {
			var out, errb bytes.Buffer
			code := run(ctx, args, pr, &out, &errb, func(string) string { return "" }, func() []string { return nil })
			done <- result{code, errb.String()}
		}()
		select {
		case r := <-done:
			if r.code != exitFailed || !strings.Contains(r.stderr, "interrupted by SIGTERM") {
				t.Errorf("%v: exit %d, stderr %q; want exit 1 naming SIGTERM", args, r.code, r.stderr)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: still blocked on stdin 5 s after the signal", args)
		}
	}
}

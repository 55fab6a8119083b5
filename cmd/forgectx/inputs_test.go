package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inputFlagCases are the input files of every command, each given a path that is not a
// regular file; profile is a valid profile for the flags that need one beside.
func inputFlagCases(profile, fifo, out string) map[string][]string {
	return map[string][]string{
		"distill --payload":            {"distill", "--payload", fifo},
		"snapshot --from-acquisition":  {"snapshot", "--from-acquisition", fifo, "--profile", profile, "--category", "observation", "--out", out},
		"snapshot --profile":           {"snapshot", "--from-acquisition", "-", "--profile", fifo, "--category", "observation", "--out", out},
		"snapshot --bots":              {"snapshot", "--from-acquisition", "-", "--profile", profile, "--bots", fifo, "--category", "observation", "--out", out},
		"run --harness":                {"run", "--harness", fifo},
		"status reconcile --harness":   {"status", "reconcile", "--harness", fifo},
		"review-context run --harness": {"review-context", "run", "--harness", fifo, "--project", "1", "--mr", "1", "--api-url", "http://127.0.0.1:9/api/v4"},
		"policy validate":              {"review-context", "policy", "validate", fifo},
	}
}

// Every input file must be a regular file: a FIFO (which would block an open or a read
// forever) and a character device (/dev/zero: endless) are refused at once with exit 2 and an
// error naming the flag, the path and what it is.
func TestInputFilesMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(profile, []byte(`{"entity_kind":"work_item","included_sources":["comments","entity"],"record_selection":"oldest","check_log_selection":"none","bounds":{"max_records_per_source":5,"max_source_bytes":4096,"max_record_bytes":1024,"max_log_bytes":1024,"max_metadata_string_bytes":64,"max_labels":5}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ path, kind string }{{fifo, "FIFO"}, {"/dev/zero", "character device"}} {
		for name, args := range inputFlagCases(profile, bad.path, filepath.Join(dir, "out")) {
			if strings.HasPrefix(name, "policy") && bad.kind != "FIFO" {
				continue
			}
			t.Run(name+" "+bad.kind, func(t *testing.T) {
				type result struct {
					code   int
					stderr string
				}
				done := make(chan result, 1)
				go func() {
					code, _, errOut := runCLI(t, map[string]string{"GITHUB_TOKEN": "t0ken-value-for-tests"}, "", args...)
					done <- result{code, errOut}
				}()
				select {
				case r := <-done:
					flagName := strings.Fields(name)[len(strings.Fields(name))-1]
					if r.code != exitUsage || !strings.Contains(r.stderr, bad.kind) || (!strings.HasPrefix(name, "policy") && !strings.Contains(r.stderr, flagName)) {
						t.Errorf("exit %d, stderr %q; want exit 2 naming %s and %s", r.code, r.stderr, flagName, bad.kind)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("hangs on a %s", bad.kind)
				}
			})
		}
	}
}

// A policy file over the bound is reported as over it, not with a made-up size (the bounded
// read holds bound+1 bytes, which is not the file's size).
func TestPolicyFileOverBoundNamesTheBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "policy.yml")
	if err := os.WriteFile(p, []byte(strings.Repeat("#", 200000)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, nil, "", "review-context", "policy", "validate", p)
	if code != exitUsage || strings.Contains(errOut, "65537") || !strings.Contains(errOut, "over the 65536-byte") {
		t.Fatalf("exit %d, stderr %q; want exit 2 naming the bound, no size", code, errOut)
	}
}

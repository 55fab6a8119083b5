package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/snapshot"
)

const acqFixtures = "../../test/fixtures/acquisition"

func fixtureArgs(name string) []string {
	d := filepath.Join(acqFixtures, name)
	cat, _ := os.ReadFile(filepath.Join(d, "category"))
	return []string{"--from-acquisition", filepath.Join(d, "acquisition.json"), "--profile", filepath.Join(d, "profile.json"),
		"--bots", filepath.Join(d, "bots.json"), "--category", strings.TrimSpace(string(cat))}
}

// forgectx snapshot --from-acquisition writes the golden tree and prints one JSON line whose
// index_sha256 is the digest of the written root index.
func TestSnapshotFromAcquisitionWritesGoldenTreeAndOneLineSummary(t *testing.T) {
	for _, name := range []string{"change-proposal", "work-item", "rejected-records"} {
		out := filepath.Join(t.TempDir(), "ctx")
		args := append([]string{"--log-level", "disabled", "snapshot"}, fixtureArgs(name)...)
		code, stdout, stderr := runCLI(t, nil, "", append(args, "--out", out)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		if strings.Count(stdout, "\n") != 1 {
			t.Fatalf("%s: stdout is not one line: %q", name, stdout)
		}
		var line struct {
			Out     string `json:"out"`
			Index   string `json:"index_sha256"`
			Summary struct {
				Gaps []json.RawMessage `json:"gaps"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(stdout), &line); err != nil {
			t.Fatal(err)
		}
		idx, err := os.ReadFile(filepath.Join(out, "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		golden, err := os.ReadFile(filepath.Join("../../test/golden/snapshot", name, "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(idx)
		if line.Index != hex.EncodeToString(sum[:]) || string(idx) != string(golden) || line.Out != out {
			t.Errorf("%s: index digest/golden mismatch", name)
		}
	}
}

// Collection profiles: a profile violating the entity-kind rules, a bad category or a bad bot
// registry is a configuration error (exit 2, naming the field and the rule) before any fetch.
func TestSnapshotConfigErrorsExit2BeforeAnyFetch(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	badProfile := write("bad-profile.json", `{"entity_kind":"work_item","included_sources":["entity","reviews"],"record_selection":"newest","check_log_selection":"none","bounds":{"max_records_per_source":1,"max_source_bytes":1,"max_record_bytes":1,"max_log_bytes":1,"max_metadata_string_bytes":1,"max_labels":0}}`)
	goodProfile := filepath.Join(acqFixtures, "work-item", "profile.json")
	badBots := write("bots.json", `{"bots":[{"id":"900","bot_role":""}]}`)
	acq := filepath.Join(acqFixtures, "work-item", "acquisition.json")
	for _, tc := range []struct {
		rule string
		args []string
		want string
	}{
		{"work item cannot select reviews (forge path, before the fetch)", []string{"--forge", "github", "--repo", "o/r", "--number", "1", "--profile", badProfile, "--category", "observation"}, "included_sources: a work_item profile cannot select reviews"},
		{"work item cannot select reviews", []string{"--from-acquisition", acq, "--profile", badProfile, "--category", "observation"}, "included_sources"},
		{"category", []string{"--from-acquisition", acq, "--profile", goodProfile, "--category", "admin"}, "category"},
		{"bot role", []string{"--from-acquisition", acq, "--profile", goodProfile, "--category", "mutation", "--bots", badBots}, "bots[0].bot_role"},
		{"source required", []string{"--profile", goodProfile, "--category", "mutation"}, "--from-acquisition or --forge"},
		{"sources exclusive", []string{"--from-acquisition", acq, "--forge", "github", "--repo", "o/r", "--number", "1", "--profile", goodProfile, "--category", "mutation"}, "mutually exclusive"},
		{"profile required", []string{"--from-acquisition", acq, "--category", "mutation"}, "--profile"},
		{"missing profile file", []string{"--from-acquisition", acq, "--profile", filepath.Join(dir, "none.json"), "--category", "mutation"}, "--profile"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			args := append([]string{"--log-level", "disabled", "snapshot"}, tc.args...)
			code, _, stderr := runCLI(t, nil, "", append(args, "--out", filepath.Join(t.TempDir(), "o"))...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 naming %q", code, stderr, tc.want)
			}
		})
	}
}

// Abort rules surface as a failure (exit 1) naming the rule, and no tree is written.
func TestSnapshotAbortExits1WithoutATree(t *testing.T) {
	var a map[string]any
	b, _ := os.ReadFile(filepath.Join(acqFixtures, "work-item", "acquisition.json"))
	json.Unmarshal(b, &a)
	a["entity"].(map[string]any)["author"] = map[string]any{"id": "103", "login": "ines"} // triage: below write
	dir := t.TempDir()
	p := filepath.Join(dir, "acq.json")
	b, _ = json.Marshal(a)
	os.WriteFile(p, b, 0o600)
	args := fixtureArgs("work-item")
	args[1] = p
	out := filepath.Join(dir, "ctx")
	code, stdout, stderr := runCLI(t, nil, "", append(append([]string{"--log-level", "disabled", "snapshot"}, args...), "--out", out)...)
	if code != exitFailed || !strings.Contains(stderr, "snapshot aborted: entity authorization_failed") || stdout != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a tree was written for an aborted snapshot")
	}
}

// --secret-env registers the variable's value with the filter as a run credential.
func TestSnapshotSecretEnvValuesAreRedacted(t *testing.T) {
	var a map[string]any
	b, _ := os.ReadFile(filepath.Join(acqFixtures, "work-item", "acquisition.json"))
	json.Unmarshal(b, &a)
	a["comments"].([]any)[0].(map[string]any)["body"] = "see plain-value-7f3a9c2e1b for details"
	dir := t.TempDir()
	p := filepath.Join(dir, "acq.json")
	b, _ = json.Marshal(a)
	os.WriteFile(p, b, 0o600)
	args := fixtureArgs("work-item")
	args[1] = p
	run := func(extra ...string) string {
		out := filepath.Join(t.TempDir(), "ctx")
		full := append(append(append([]string{"--log-level", "disabled", "snapshot"}, args...), extra...), "--out", out)
		code, _, stderr := runCLI(t, map[string]string{"RUN_NOTE": "plain-value-7f3a9c2e1b"}, "", full...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var all strings.Builder
		filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				c, _ := os.ReadFile(path)
				all.Write(c)
			}
			return nil
		})
		return all.String()
	}
	if !strings.Contains(run(), "plain-value-7f3a9c2e1b") {
		t.Fatal("control: the value should pass without --secret-env")
	}
	if strings.Contains(run("--secret-env", "RUN_NOTE"), "plain-value-7f3a9c2e1b") {
		t.Fatal("--secret-env value reached the tree")
	}
}

// An acquisition file sets the assembly's soft memory limit to
// snapshot.MemoryLimit of its size (reported in the "snapshot written" log line) and the
// process's limit is restored afterwards; GOMEMLIMIT set by the operator wins.
func TestSnapshotSetsAndRestoresTheMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	fi, err := os.Stat(filepath.Join(acqFixtures, "change-proposal", "acquisition.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want int64
	}{
		{nil, snapshot.MemoryLimit(fi.Size())},
		{map[string]string{"GOMEMLIMIT": "1GiB"}, 0},
	} {
		out := filepath.Join(t.TempDir(), "ctx")
		args := append([]string{"--log-format", "json", "--log-level", "info", "snapshot"}, fixtureArgs("change-proposal")...)
		code, _, stderr := runCLI(t, tc.env, "", append(args, "--out", out)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var got *int64
		for _, l := range strings.Split(stderr, "\n") {
			var rec struct {
				Msg   string `json:"message"`
				Limit *int64 `json:"memory_limit_bytes"`
			}
			if json.Unmarshal([]byte(l), &rec) == nil && rec.Msg == "snapshot written" {
				got = rec.Limit
			}
		}
		if got == nil || *got != tc.want {
			t.Errorf("env %v: memory_limit_bytes %v, want %d\n%s", tc.env, got, tc.want, stderr)
		}
		if after := debug.SetMemoryLimit(-1); after != before {
			t.Errorf("env %v: memory limit left at %d, was %d", tc.env, after, before)
		}
	}
	if want := 2*fi.Size() + 96<<20; snapshot.MemoryLimit(fi.Size()) != want {
		t.Errorf("MemoryLimit(%d) = %d, want twice the acquisition plus 96 MiB (%d)", fi.Size(), snapshot.MemoryLimit(fi.Size()), want)
	}
}

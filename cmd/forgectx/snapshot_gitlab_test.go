package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

const gitlabCassette = "../../test/fixtures/gitlab/cassettes/mr"

func gitlabProfile() acquisition.Profile {
	return acquisition.Profile{
		EntityKind:        acquisition.KindChangeProposal,
		IncludedSources:   []string{"agent_runs", "check_logs", "checks", "comments", "entity", "reviews"},
		RecordSelection:   "newest",
		CheckLogSelection: "failed",
		Bounds: acquisition.Bounds{MaxRecordsPerSource: 100, MaxSourceBytes: 4096, MaxRecordBytes: 8192,
			MaxLogBytes: 4096, MaxMetadataStringBytes: 256, MaxLabels: 20},
	}
}

func testEnv(vars map[string]string, logs *bytes.Buffer) *env {
	return &env{
		Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
		Getenv: func(k string) string { return vars[k] },
		Log:    zerolog.New(logs),
	}
}

// TestSnapshotGitLabReplayAssembles: `--forge gitlab --replay` reads the recorded merge
// request offline (API URL from the cassette), writes --stats, and the acquisition assembles.
func TestSnapshotGitLabReplayAssembles(t *testing.T) {
	stats := filepath.Join(t.TempDir(), "stats.json")
	var logs bytes.Buffer
	o := forgeOptions{Forge: "gitlab", Repo: "Acme/Platform/widgets", Number: 7, Replay: gitlabCassette, Stats: stats}
	acq, err := acquireFromForge(context.Background(), testEnv(nil, &logs), o, gitlabProfile())
	if err != nil {
		t.Fatal(err)
	}
	if acq.Source.Host != "gitlab.example.com:8443" || acq.Entity.ID != "9007" || len(acq.Checks) != 10 {
		t.Errorf("acquisition source %+v entity %s checks %d", acq.Source, acq.Entity.ID, len(acq.Checks))
	}
	raw, err := os.ReadFile(stats)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Requests   int     `json:"requests"`
		LowerBound int     `json:"lower_bound_requests"`
		Ratio      float64 `json:"request_ratio"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.Requests != 21 || s.LowerBound != 21 || s.Ratio != 1 {
		t.Errorf("stats %s (%v)", raw, err)
	}
	tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: gitlabProfile(), Category: "observation", Filter: filter.New(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Summary.EntityNumber != 7 {
		t.Errorf("summary %+v", tree.Summary)
	}
	if strings.Contains(logs.String(), "unused_interactions") {
		t.Errorf("replay left interactions unused: %s", logs.String())
	}
}

func TestSnapshotGitLabFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    forgeOptions
		vars map[string]string
		want string
	}{
		{"record and replay together", forgeOptions{Repo: "42", Number: 7, Record: "a", Replay: "b"}, nil, "mutually exclusive"},
		{"empty token variable", forgeOptions{Repo: "42", Number: 7, TokenEnv: "GITLAB_TOKEN"}, nil, "--token-env GITLAB_TOKEN"},
		{"missing cassette", forgeOptions{Repo: "42", Number: 7, Replay: "/nonexistent"}, nil, "--replay"},
		{"repo that steers the path", forgeOptions{Repo: "group/../users", Number: 7, Replay: gitlabCassette}, nil, "--repo"},
		{"repo without a namespace", forgeOptions{Repo: "project", Number: 7, Replay: gitlabCassette}, nil, "--repo"},
		{"bad api url", forgeOptions{Repo: "42", Number: 7, TokenEnv: "T", APIURL: "ftp://x"}, map[string]string{"T": "glpat-x"}, "--api-url"},
	} {
		var logs bytes.Buffer
		tc.o.Forge = "gitlab" // the registry routes by --forge
		_, err := acquireFromForge(context.Background(), testEnv(tc.vars, &logs), tc.o, gitlabProfile())
		var u *usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want usage error mentioning %q", tc.name, err, tc.want)
		}
	}
}

// TestSnapshotGitLabReplayMissIsAnError: a request the cassette does not hold fails the
// entity read instead of touching the network.
func TestSnapshotGitLabReplayMissIsAnError(t *testing.T) {
	var logs bytes.Buffer
	o := forgeOptions{Forge: "gitlab", Repo: "Acme/Platform/widgets", Number: 8, Replay: gitlabCassette}
	_, err := acquireFromForge(context.Background(), testEnv(nil, &logs), o, gitlabProfile())
	if err == nil || !strings.Contains(err.Error(), "merge_request") {
		t.Fatalf("err = %v", err)
	}
}

// TestSnapshotForgeGitLabReplayCLI: `forgectx snapshot --forge gitlab --replay …` works end to
// end through the CLI and the tree passes `forgectx verify`.
func TestSnapshotForgeGitLabReplayCLI(t *testing.T) {
	dir := t.TempDir()
	prof, err := json.Marshal(gitlabProfile())
	if err != nil {
		t.Fatal(err)
	}
	profPath := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(profPath, prof, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ctx")
	code, stdout, stderr := runCLI(t, nil, "", "snapshot", "--forge", "gitlab", "--replay", gitlabCassette,
		"--repo", "Acme/Platform/widgets", "--number", "7", "--profile", profPath, "--category", "observation",
		"--out", out, "--stats", filepath.Join(dir, "stats.json"))
	if code != exitOK {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, `"index_sha256"`) {
		t.Errorf("stdout %s", stdout)
	}
	code, stdout, stderr = runCLI(t, nil, "", "verify", out)
	if code != exitOK {
		t.Errorf("verify exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestSnapshotGitLabRecordKeepsTheTokenOut: recording a live GitLab run (--record, --stats,
// --token-env) against a server that echoes the token in a response body, a response header
// and a Link header: the token reaches neither the cassette, the stats, the logs nor the
// acquisition, and the cassette replays into the same acquisition.
func TestSnapshotGitLabRecordKeepsTheTokenOut(t *testing.T) {
	const token = "glpat-Echo0123456789abcdefXYZ"
	c, err := cassette.Load(gitlabCassette)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if strings.HasSuffix(in.Request.URL, "/merge_requests/7") {
			in.Response.Header.Set("X-Debug-Token", token)
			in.Response.Header.Set("Link", `<https://gitlab.example.com:8443/api/v4/x?private_token=`+token+`>; rel="first"`)
		}
		if strings.HasSuffix(in.Request.URL, "/projects/Acme%2FPlatform%2Fwidgets") {
			var p map[string]any
			if err := json.Unmarshal(in.Response.Body.JSON, &p); err != nil {
				t.Fatal(err)
			}
			p["description"] = "token " + token
			b, _ := json.Marshal(p)
			in.Response.Body = cassette.NewBody(b)
		}
	}
	fake := httpfake.New(t)
	fake.ExpectCassette(c)
	dir := t.TempDir()
	rec, stats := filepath.Join(dir, "rec"), filepath.Join(dir, "stats.json")
	var logs bytes.Buffer
	o := forgeOptions{Forge: "gitlab", Repo: "Acme/Platform/widgets", Number: 7, APIURL: fake.URL + "/api/v4", TokenEnv: "GITLAB_TOKEN", Record: rec, Stats: stats}
	live, err := acquireFromForge(context.Background(), testEnv(map[string]string{"GITLAB_TOKEN": token}, &logs), o, gitlabProfile())
	if err != nil {
		t.Fatal(err)
	}
	var files, redacted int
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if bytes.Contains(b, []byte(token)) {
			t.Errorf("%s contains the token", path)
		}
		redacted += bytes.Count(b, []byte("REDACTED"))
		return err
	})
	// The echoed body and the Link header are recorded with the value replaced (the
	// X-Debug-Token header is not on the recorder's allow-list at all).
	if err != nil || files < 22 || redacted < 2 {
		t.Fatalf("walk: %v (%d files, %d redactions)", err, files, redacted)
	}
	var acq bytes.Buffer
	if err := acquisition.Write(&acq, live); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), token) || strings.Contains(acq.String(), token) {
		t.Error("the token reached the logs or the acquisition")
	}
	replayed, err := acquireFromForge(context.Background(), testEnv(nil, &logs),
		forgeOptions{Forge: "gitlab", Repo: "Acme/Platform/widgets", Number: 7, Replay: rec}, gitlabProfile())
	if err != nil {
		t.Fatal(err)
	}
	// The replayed host is the fake's (the recorded API URL); everything else is identical.
	var again bytes.Buffer
	if err := acquisition.Write(&again, replayed); err != nil {
		t.Fatal(err)
	}
	if acq.String() != again.String() {
		t.Error("replay of the recorded cassette differs from the live run")
	}
}

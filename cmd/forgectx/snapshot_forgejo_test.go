package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

func forgejoTestEnv(vars map[string]string, logs *bytes.Buffer) *env {
	return &env{Stdout: &bytes.Buffer{}, Stderr: logs, Getenv: func(k string) string { return vars[k] },
		Environ: func() []string { return nil }, Log: zerolog.New(logs)}
}

// TestAcquireForgejoReplaysFixtures: --replay of each Forgejo fixture cassette needs no token
// and no network, reproduces the golden acquisition and writes --stats.
func TestAcquireForgejoReplaysFixtures(t *testing.T) {
	for _, tc := range []struct {
		dir, kind string
		number    int
	}{
		{"issue", acquisition.KindWorkItem, 7},
		{"pull", acquisition.KindChangeProposal, 12},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			fixture := filepath.Join("..", "..", "test", "fixtures", "forgejo", tc.dir)
			stats := filepath.Join(t.TempDir(), "stats.json")
			var logs bytes.Buffer
			p := acquisition.Profile{EntityKind: tc.kind, IncludedSources: []string{"agent_runs", "comments", "entity"}}
			if tc.kind == acquisition.KindChangeProposal {
				p.IncludedSources = []string{"check_logs", "checks", "comments", "entity", "reviews"}
				p.CheckLogSelection = "failed"
			}
			a, err := acquireFromForge(context.Background(), forgejoTestEnv(nil, &logs),
				forgeOptions{Forge: "forgejo", Repo: "Acme/Widgets", Number: tc.number, Replay: fixture, Stats: stats}, p)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := acquisition.Write(&got, a); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(fixture, "acquisition.golden.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("replayed acquisition differs from the golden file")
			}
			var st struct {
				Forge    string `json:"forge"`
				Requests int    `json:"requests"`
			}
			b, err := os.ReadFile(stats)
			if err != nil || json.Unmarshal(b, &st) != nil || st.Forge != "forgejo" || st.Requests == 0 {
				t.Errorf("stats file = %s, %v", b, err)
			}
			if strings.Contains(logs.String(), "unused_responses") {
				t.Errorf("replay left recorded responses unused: %s", logs.String())
			}
		})
	}
}

// TestAcquireForgejoUsageErrors: configuration problems are usage errors (exit 2) before any
// request, and the token value never appears in an error.
func TestAcquireForgejoUsageErrors(t *testing.T) {
	p := acquisition.Profile{EntityKind: acquisition.KindWorkItem, IncludedSources: []string{"entity"}}
	for name, tc := range map[string]struct {
		o    forgeOptions
		vars map[string]string
		want string
	}{
		"record and replay": {forgeOptions{Forge: "forgejo", Repo: "a/b", Number: 1, Record: "x", Replay: "y"}, nil, "mutually exclusive"},
		"no api url":        {forgeOptions{Forge: "forgejo", Repo: "a/b", Number: 1}, map[string]string{"FORGEJO_TOKEN": "s3cr3t"}, "--api-url"},
		"no token":          {forgeOptions{Forge: "forgejo", Repo: "a/b", Number: 1, APIURL: "https://x.example/api/v1"}, nil, "FORGEJO_TOKEN"},
		"named token unset": {forgeOptions{Forge: "forgejo", Repo: "a/b", Number: 1, APIURL: "https://x.example/api/v1", TokenEnv: "MY_TOKEN"}, nil, "MY_TOKEN"},
		"bad api url":       {forgeOptions{Forge: "forgejo", Repo: "a/b", Number: 1, APIURL: "https://x.example"}, map[string]string{"FORGEJO_TOKEN": "s3cr3t"}, "/api/v1"},
		"missing cassette":  {forgeOptions{Forge: "forgejo", Repo: "a/b", Number: 1, Replay: "/nonexistent"}, nil, "--replay"},
		"github cassette":   {forgeOptions{Forge: "forgejo", Repo: "a/b", Number: 1, Replay: githubCassetteDir(t)}, nil, "not forgejo"},
		"repo steering":     {forgeOptions{Forge: "forgejo", Repo: "a/../b", Number: 1, APIURL: "https://x.example/api/v1"}, map[string]string{"FORGEJO_TOKEN": "s3cr3t"}, "--repo"},
		"repo with query":   {forgeOptions{Forge: "forgejo", Repo: "a/b?token=x", Number: 1, APIURL: "https://x.example/api/v1"}, map[string]string{"FORGEJO_TOKEN": "s3cr3t"}, "--repo"},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			_, err := acquireFromForge(context.Background(), forgejoTestEnv(tc.vars, &logs), tc.o, p)
			var u *usageError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a usage error mentioning %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(logs.String(), "s3cr3t") {
				t.Error("token value leaked")
			}
		})
	}
}

// githubCassetteDir writes a minimal cassette recorded for another forge.
func githubCassetteDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cassette.json"), []byte(`{"cassette_version":1,"forge":"github"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAcquireForgejoRecordThenReplay: a live run (against a fake Forgejo serving the pull
// fixture) with --record writes a cassette without the token; replaying that cassette offline
// gives the same acquisition.
func TestAcquireForgejoRecordThenReplay(t *testing.T) {
	const token = "forgejo-test-token-0123456789"
	fixture := filepath.Join("..", "..", "test", "fixtures", "forgejo", "pull")
	c, err := cassette.Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	fake := httpfake.New(t)
	fake.ExpectCassette(c)
	rec := filepath.Join(t.TempDir(), "rec")
	p := acquisition.Profile{EntityKind: acquisition.KindChangeProposal,
		IncludedSources: []string{"check_logs", "checks", "comments", "entity", "reviews"}, CheckLogSelection: "failed"}
	var logs bytes.Buffer
	o := forgeOptions{Forge: "forgejo", Repo: "Acme/Widgets", Number: 12, APIURL: fake.URL + "/api/v1", TokenEnv: "FJ", Record: rec}
	live, err := acquireFromForge(context.Background(), forgejoTestEnv(map[string]string{"FJ": token}, &logs), o, p)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(rec, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if bytes.Contains(b, []byte(token)) {
			t.Errorf("%s contains the token", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), token) {
		t.Error("log contains the token")
	}
	replayed, err := acquireFromForge(context.Background(), forgejoTestEnv(nil, &logs),
		forgeOptions{Forge: "forgejo", Repo: "Acme/Widgets", Number: 12, Replay: rec}, p)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	acquisition.Write(&a, live)
	acquisition.Write(&b, replayed)
	if a.String() != b.String() {
		t.Error("replay of the recorded cassette differs from the live run")
	}
}

// TestSnapshotForgejoReplayThenVerify: `forgectx snapshot --forge forgejo --replay` on each
// fixture writes a tree that `forgectx verify` accepts against the printed index digest.
func TestSnapshotForgejoReplayThenVerify(t *testing.T) {
	for _, tc := range []struct {
		dir, profile string
		number       int
	}{
		{"issue", `{"entity_kind":"work_item","included_sources":["agent_runs","comments","entity"],"record_selection":"oldest","check_log_selection":"none",` + forgejoBounds + `}`, 7},
		{"pull", `{"entity_kind":"change_proposal","included_sources":["check_logs","checks","comments","entity","reviews"],"record_selection":"newest","check_log_selection":"failed",` + forgejoBounds + `}`, 12},
	} {
		for _, category := range []string{"observation", "mutation"} {
			t.Run(tc.dir+"/"+category, func(t *testing.T) {
				tmp := t.TempDir()
				profile := filepath.Join(tmp, "profile.json")
				if err := os.WriteFile(profile, []byte(tc.profile), 0o600); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(tmp, "ctx")
				fixture := filepath.Join("..", "..", "test", "fixtures", "forgejo", tc.dir)
				code, stdout, stderr := runCLI(t, nil, "", "snapshot", "--forge", "forgejo", "--replay", fixture,
					"--repo", "Acme/Widgets", "--number", strconv.Itoa(tc.number), "--profile", profile,
					"--category", category, "--out", out)
				if code != exitOK {
					t.Fatalf("snapshot exit %d: %s", code, stderr)
				}
				var sum struct {
					IndexSHA256 string `json:"index_sha256"`
				}
				if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.IndexSHA256) != 64 {
					t.Fatalf("summary %q: %v", stdout, err)
				}
				code, vout, verr := runCLI(t, nil, "", "verify", out, "--index-sha256", sum.IndexSHA256, "--format", "json")
				if code != exitOK {
					t.Fatalf("verify exit %d: %s %s", code, vout, verr)
				}
			})
		}
	}
}

const forgejoBounds = `"bounds":{"max_records_per_source":100,"max_source_bytes":1048576,"max_record_bytes":65536,"max_log_bytes":65536,"max_metadata_string_bytes":1024,"max_labels":20}`

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

const ghFixtures = "../../test/fixtures/github"

var ghScenarios = []struct {
	dir    string
	number int
	kind   string
}{
	{"issue", 7, "work_item"},
	{"pr", 42, "change_proposal"},
	{"pr-merged-bots", 43, "change_proposal"},
	{"pagination-exact", 100, "work_item"},
	{"pagination-empty-page", 101, "work_item"},
}

func ghProfile(t *testing.T, kind string) string {
	t.Helper()
	sources := `["agent_runs","comments","entity"]`
	logs := "none"
	if kind == "change_proposal" {
		sources = `["agent_runs","check_logs","checks","comments","entity","reviews"]`
		logs = "failed"
	}
	p := filepath.Join(t.TempDir(), "profile.json")
	doc := `{"entity_kind":"` + kind + `","included_sources":` + sources + `,"record_selection":"oldest","check_log_selection":"` + logs +
		`","bounds":{"max_records_per_source":5000,"max_source_bytes":4096,"max_record_bytes":65536,"max_log_bytes":65536,"max_metadata_string_bytes":1024,"max_labels":100}}`
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func ghBots(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bots.json")
	if err := os.WriteFile(p, []byte(`{"bots":[{"id":"BOT_kgDOAb4Bng","bot_role":"dependency-bot"},{"id":"BOT_kgDOAn-Zag","bot_role":"ci"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// `forgectx snapshot --forge github --replay test/fixtures/github/<scenario>` produces a
// snapshot that `forgectx verify` accepts, offline and without a token, and --stats reports
// the run.
func TestSnapshotGitHubReplayProducesVerifiedSnapshots(t *testing.T) {
	for _, sc := range ghScenarios {
		t.Run(sc.dir, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "context")
			stats := filepath.Join(t.TempDir(), "stats.json")
			code, stdout, stderr := runCLI(t, nil, "", "snapshot", "--forge", "github", "--repo", "octo-org/Hello-World",
				"--number", strconv.Itoa(sc.number), "--replay", filepath.Join(ghFixtures, sc.dir), "--stats", stats,
				"--profile", ghProfile(t, sc.kind), "--category", "observation", "--bots", ghBots(t), "--out", out)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var res struct {
				IndexSHA256 string `json:"index_sha256"`
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res.IndexSHA256) != 64 {
				t.Fatalf("stdout = %q", stdout)
			}
			code, vout, verr := runCLI(t, nil, "", "verify", out, "--index-sha256", res.IndexSHA256)
			if code != exitOK {
				t.Fatalf("verify exit %d: %s %s", code, vout, verr)
			}
			var st struct {
				Requests   int            `json:"requests"`
				ByEndpoint map[string]int `json:"requests_by_endpoint"`
				Pages      map[string]int `json:"pages"`
				Records    map[string]int `json:"records"`
				LowerBound int            `json:"lower_bound_requests"`
			}
			b, err := os.ReadFile(stats)
			if err != nil || json.Unmarshal(b, &st) != nil {
				t.Fatalf("stats: %v %s", err, b)
			}
			if st.Requests == 0 || st.ByEndpoint["POST /graphql Entity"] != 1 || st.Pages["comments"] == 0 || st.LowerBound == 0 || st.Records == nil {
				t.Errorf("stats = %s", b)
			}
		})
	}
}

// --record writes a cassette with the token stripped from everything on disk, and replaying
// it reproduces the recorded snapshot byte for byte (same index digest).
func TestSnapshotGitHubRecordThenReplay(t *testing.T) {
	const token = "ghp_recordtoken1234567890abcdefghijklmn"
	c, err := cassette.Load(filepath.Join(ghFixtures, "pr"))
	if err != nil {
		t.Fatal(err)
	}
	fake := httpfake.New(t)
	fake.ExpectCassette(c)
	rec := filepath.Join(t.TempDir(), "cassette")
	profile, bots := ghProfile(t, "change_proposal"), ghBots(t)
	args := func(out string, extra ...string) []string {
		return append([]string{"snapshot", "--forge", "github", "--repo", "octo-org/Hello-World", "--number", "42",
			"--profile", profile, "--category", "observation", "--bots", bots, "--out", out}, extra...)
	}
	code, stdout1, stderr := runCLI(t, map[string]string{"MY_GH_TOKEN": token}, "",
		args(filepath.Join(t.TempDir(), "a"), "--api-url", fake.URL, "--token-env", "MY_GH_TOKEN", "--record", rec)...)
	if code != exitOK {
		t.Fatalf("record exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, token) || strings.Contains(stdout1, token) {
		t.Fatal("token printed")
	}
	err = filepath.Walk(rec, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if strings.Contains(string(b), token) || strings.Contains(string(b), "Authorization") {
			t.Errorf("%s holds a credential", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	code, stdout2, stderr := runCLI(t, nil, "", args(filepath.Join(t.TempDir(), "b"), "--replay", rec)...)
	if code != exitOK {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	digest := func(s string) string {
		var r struct {
			IndexSHA256 string `json:"index_sha256"`
		}
		_ = json.Unmarshal([]byte(s), &r)
		return r.IndexSHA256
	}
	if digest(stdout1) == "" || digest(stdout1) != digest(stdout2) {
		t.Errorf("replayed snapshot %q differs from the recorded run's %q", digest(stdout2), digest(stdout1))
	}
}

// Configuration problems are usage errors (exit 2) before any request; the token value is
// never printed.
func TestSnapshotGitHubUsageErrors(t *testing.T) {
	profile := ghProfile(t, "work_item")
	base := []string{"snapshot", "--forge", "github", "--repo", "octo-org/Hello-World", "--number", "7",
		"--profile", profile, "--category", "observation"}
	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
		want string
	}{
		"no token":        {nil, []string{"--api-url", "http://127.0.0.1:9"}, "GITHUB_TOKEN"},
		"named env empty": {map[string]string{"GITHUB_TOKEN": "ghp_x"}, []string{"--token-env", "OTHER"}, "OTHER"},
		"record+replay":   {nil, []string{"--record", t.TempDir(), "--replay", t.TempDir()}, "mutually exclusive"},
		"bad cassette":    {nil, []string{"--replay", t.TempDir()}, "--replay"},
		"bad api url":     {map[string]string{"GITHUB_TOKEN": "ghp_secretvalue"}, []string{"--api-url", "ftp://x"}, "api url"},
		"bad repo":        {map[string]string{"GITHUB_TOKEN": "ghp_secretvalue"}, []string{"--repo", "octo-org/Hello-World/x"}, "OWNER/NAME"},
		"repo path trick": {map[string]string{"GITHUB_TOKEN": "ghp_secretvalue"}, []string{"--repo", "../x"}, "OWNER/NAME"},
	} {
		t.Run(name, func(t *testing.T) {
			args := append(append(append([]string{}, base...), "--out", filepath.Join(t.TempDir(), "o")), tc.args...)
			code, _, stderr := runCLI(t, tc.env, "", args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 mentioning %q", code, stderr, tc.want)
			}
			if strings.Contains(stderr, "ghp_") {
				t.Errorf("token value printed: %q", stderr)
			}
		})
	}
}

// --stats on the large scenario (generated at test time): the CLI run makes no more than 1.2×
// the lower-bound requests and the snapshot verifies.
func TestSnapshotGitHubLargeScenarioStats(t *testing.T) {
	if testing.Short() {
		t.Skip("large scenario")
	}
	c, err := ghscenario.Build(ghscenario.Large())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "large")
	if err := cassette.Write(dir, c); err != nil {
		t.Fatal(err)
	}
	out, stats := filepath.Join(t.TempDir(), "context"), filepath.Join(t.TempDir(), "stats.json")
	code, stdout, stderr := runCLI(t, nil, "", "snapshot", "--forge", "github", "--repo", "octo-org/Hello-World", "--number", "5000",
		"--replay", dir, "--stats", stats, "--profile", ghProfile(t, "change_proposal"), "--category", "observation",
		"--bots", ghBots(t), "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var st struct {
		Requests   int     `json:"requests"`
		LowerBound int     `json:"lower_bound_requests"`
		Ratio      float64 `json:"request_ratio"`
	}
	b, err := os.ReadFile(stats)
	if err != nil || json.Unmarshal(b, &st) != nil {
		t.Fatalf("stats: %v", err)
	}
	if st.LowerBound == 0 || st.Ratio > 1.2 || float64(st.Requests) > 1.2*float64(st.LowerBound) {
		t.Errorf("requests %d, lower bound %d, ratio %.3f", st.Requests, st.LowerBound, st.Ratio)
	}
	var res struct {
		IndexSHA256 string `json:"index_sha256"`
	}
	_ = json.Unmarshal([]byte(stdout), &res)
	if code, _, verr := runCLI(t, nil, "", "verify", out, "--index-sha256", res.IndexSHA256); code != exitOK {
		t.Fatalf("verify exit %d: %s", code, verr)
	}
}

// A token GitHub echoes back (in a comment body and a Link header) reaches neither the
// cassette, nor stdout/stderr, nor the snapshot: --token-env registers it with the filter as an
// exact run credential, so even a token without a known prefix is redacted.
func TestSnapshotGitHubEchoedTokenIsRedactedEverywhere(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef01234567" // classic 40-hex: no prefix to detect
	c, err := cassette.Load(filepath.Join(ghFixtures, "issue"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if !strings.Contains(in.Request.URL, "/issues/7/comments") {
			continue
		}
		var items []map[string]any
		if err := json.Unmarshal(in.Response.Body.JSON, &items); err != nil {
			t.Fatal(err)
		}
		items[0]["body"] = "my token is " + token + " oops"
		b, _ := json.Marshal(items)
		in.Response.Body = cassette.NewBody(b)
		in.Response.Header.Set("Link", `<https://api.github.com/repos/octo-org/Hello-World/issues/7/comments?per_page=100&t=`+token+`>; rel="first"`)
	}
	fake := httpfake.New(t)
	fake.ExpectCassette(c)
	rec, out := filepath.Join(t.TempDir(), "cassette"), filepath.Join(t.TempDir(), "ctx")
	code, stdout, stderr := runCLI(t, map[string]string{"GH_PAT": token}, "", "snapshot", "--forge", "github",
		"--repo", "octo-org/Hello-World", "--number", "7", "--api-url", fake.URL, "--token-env", "GH_PAT", "--record", rec,
		"--profile", ghProfile(t, "work_item"), "--category", "observation", "--bots", ghBots(t), "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout+stderr, token) {
		t.Error("token printed")
	}
	seen, admitted := 0, 0
	for _, dir := range []string{rec, out} {
		err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			seen++
			b, err := os.ReadFile(p)
			if strings.Contains(string(b), token) {
				t.Errorf("%s holds the token", p)
			}
			if dir == out && strings.Contains(string(b), "my token is ") {
				admitted++
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen < 10 || admitted != 1 {
		t.Errorf("%d files checked, %d records with the comment (want 1: the check must see the admitted comment)", seen, admitted)
	}
}

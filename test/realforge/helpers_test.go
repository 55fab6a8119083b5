// Package realforge drives the forgectx binary end to end against a real Gitea server built from
// source (scripts/gitea.sh) and seeded by giteaserver. Gitea is Forgejo's API parent: the Forgejo
// adapter reads it, and trees record it as source.forge "forgejo" (the spec's closed set).
//
// Assertions are structural (roles, states, counts, absence of hostile content, byte equality
// between two runs against the same server), never whole-tree digests across servers: ports and
// ids change from one server to the next.
package realforge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// forgectxBin is the binary built once by TestMain.
var forgectxBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "forgectx-realforge-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	forgectxBin = filepath.Join(dir, "forgectx")
	cmd := exec.Command("go", "build", "-o", forgectxBin, "github.com/forgectx/forgectx/cmd/forgectx")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building forgectx:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// result is one forgectx invocation.
type result struct {
	code           int
	stdout, stderr string
}

// forgectx runs the binary with env added to a minimal environment (no CI variables leak in
// from the machine running the tests).
func forgectx(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, forgectxBin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("forgectx %s: %v", args[0], err)
	}
	return r
}

// Profiles for the two entity kinds: everything the adapter reads.
const (
	workItemProfile = `{"entity_kind":"work_item","included_sources":["entity","comments","agent_runs"],"record_selection":"oldest","check_log_selection":"none","bounds":{"max_records_per_source":200,"max_source_bytes":1048576,"max_record_bytes":65536,"max_log_bytes":16384,"max_metadata_string_bytes":256,"max_labels":20}}`
	pullProfile     = `{"entity_kind":"change_proposal","included_sources":["entity","comments","reviews","checks","agent_runs"],"record_selection":"oldest","check_log_selection":"none","bounds":{"max_records_per_source":200,"max_source_bytes":1048576,"max_record_bytes":65536,"max_log_bytes":16384,"max_metadata_string_bytes":256,"max_labels":20}}`
)

// snap is one `forgectx snapshot --forge forgejo` run.
type snap struct {
	result
	out   string         // the tree (empty directory when the run aborted)
	stats map[string]any // --stats, when written
	sum   summary        // the stdout summary, when the tree was written
}

type summary struct {
	IndexSHA256 string `json:"index_sha256"`
	Summary     struct {
		Sources []struct {
			Source   string `json:"source"`
			Acquired int    `json:"acquired"`
			Records  int    `json:"records"`
		} `json:"sources"`
		Gaps []struct {
			Scope, Code string
			Count       int
		} `json:"gaps"`
	} `json:"summary"`
}

func (s summary) acquired(source string) int {
	for _, x := range s.Summary.Sources {
		if x.Source == source {
			return x.Acquired
		}
	}
	return -1
}

func (s summary) gap(scope, code string) int {
	for _, g := range s.Summary.Gaps {
		if g.Scope == scope && g.Code == code {
			return g.Count
		}
	}
	return 0
}

// snapshot runs forgectx snapshot against the server (live) or a cassette (replay != "").
func snapshot(t *testing.T, apiURL, token, repo string, number int64, profile string, extra ...string) snap {
	t.Helper()
	dir := t.TempDir()
	pf := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(pf, []byte(profile), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tree")
	stats := filepath.Join(dir, "stats.json")
	args := []string{"snapshot", "--forge", "forgejo", "--repo", repo, "--number", fmt.Sprint(number),
		"--profile", pf, "--category", "observation", "--out", out, "--stats", stats}
	if apiURL != "" {
		args = append(args, "--api-url", apiURL)
	}
	args = append(args, extra...)
	s := snap{out: out}
	s.result = forgectx(t, map[string]string{"FORGEJO_TOKEN": token}, args...)
	if raw, err := os.ReadFile(stats); err == nil {
		if err := json.Unmarshal(raw, &s.stats); err != nil {
			t.Fatalf("stats: %v", err)
		}
	}
	t.Logf("snapshot #%d: exit %d, requests %d, lower bound %d, response_bytes %d", number, s.code,
		statInt(s, "requests"), statInt(s, "lower_bound_requests"), statInt(s, "response_bytes"))
	if s.code == 0 {
		if err := json.Unmarshal([]byte(s.stdout), &s.sum); err != nil {
			t.Fatalf("snapshot summary: %v\n%s", err, s.stdout)
		}
	}
	return s
}

// mustSnapshot is snapshot that fails the test unless the tree was written.
func mustSnapshot(t *testing.T, apiURL, token, repo string, number int64, profile string, extra ...string) snap {
	t.Helper()
	s := snapshot(t, apiURL, token, repo, number, profile, extra...)
	if s.code != 0 {
		t.Fatalf("snapshot exit %d\n%s", s.code, tailStr(s.stderr, 3000))
	}
	return s
}

func tailStr(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// files reads every file of a tree, by relative path.
func files(t *testing.T, root string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameTree fails unless two trees have the same paths and bytes.
func sameTree(t *testing.T, a, b string) {
	t.Helper()
	fa, fb := files(t, a), files(t, b)
	var diff []string
	for p, x := range fa {
		if y, ok := fb[p]; !ok || !bytes.Equal(x, y) {
			diff = append(diff, p)
		}
	}
	for p := range fb {
		if _, ok := fa[p]; !ok {
			diff = append(diff, p)
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 || len(fa) == 0 {
		t.Fatalf("trees differ in %d of %d files: %v", len(diff), len(fa), diff)
	}
}

// verify runs forgectx verify with the retained digest.
func verify(t *testing.T, s snap) {
	t.Helper()
	r := forgectx(t, nil, "verify", s.out, "--index-sha256", s.sum.IndexSHA256)
	if r.code != 0 {
		t.Fatalf("verify exit %d: %s%s", r.code, r.stdout, tailStr(r.stderr, 2000))
	}
}

// noHostile fails if any hostile string is in any file of the tree.
func noHostile(t *testing.T, root string) {
	t.Helper()
	for p, b := range files(t, root) {
		for _, h := range hostile() {
			if bytes.Contains(b, []byte(h)) {
				t.Errorf("%s contains hostile content %q", p, h)
			}
		}
	}
}

// actor is a state/actors.json row.
type actor struct {
	ID           *string `json:"id"`
	Login        *string `json:"login"`
	Kind         string  `json:"kind"`
	Role         *string `json:"role"`
	RoleVerified bool    `json:"role_verified"`
}

// roles maps login → role ("<nil>" for a null role) as state/actors.json reports them.
func roles(t *testing.T, root string) map[string]string {
	t.Helper()
	var doc struct {
		Actors []actor `json:"actors"`
	}
	readJSON(t, filepath.Join(root, "state", "actors.json"), &doc)
	m := map[string]string{}
	for _, a := range doc.Actors {
		login, role := "<nil>", "<nil>"
		if a.Login != nil {
			login = *a.Login
		}
		if a.Role != nil {
			role = *a.Role
		}
		if a.Role != nil && !a.RoleVerified {
			role += " (unverified)"
		}
		m[login] = role
	}
	return m
}

func readJSON(t *testing.T, p string, v any) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}

// statInt reads a number from the --stats document.
func statInt(s snap, key string) int {
	f, _ := s.stats[key].(float64)
	return int(f)
}

// hasString reports whether any file of the tree contains sub.
func hasString(t *testing.T, root, sub string) bool {
	t.Helper()
	for _, b := range files(t, root) {
		if strings.Contains(string(b), sub) {
			return true
		}
	}
	return false
}

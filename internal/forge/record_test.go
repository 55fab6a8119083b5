package forge_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	_ "github.com/forgectx/forgectx/internal/forge/providers"
	"github.com/forgectx/forgectx/test/httpfake"
)

// TestRecordIsOneOptionForEveryForge: forge.Options.Record records through forge.Connect the
// same way for all three providers — the cassette names the forge and the API URL, holds the
// exchange, and never the token — and an unusable directory is a *ConfigError naming --record.
// Each forge's request is its run-state lookup (status reconcile's one read).
func TestRecordIsOneOptionForEveryForge(t *testing.T) {
	const token = "tok-Record-Canary-0123456789abcdef"
	for _, tc := range []struct {
		forge, api, path, link string
		reply                  httpfake.Reply
	}{
		{"github", "", "/repos/o/r/actions/runs/7", "https://github.com/o/r/actions/runs/7",
			httpfake.JSON(200, `{"id":7,"status":"completed","conclusion":"success"}`)},
		{"gitlab", "/api/v4", "/api/v4/projects/o%2Fr/jobs/7", "https://gitlab.example.com/o/r/-/jobs/7",
			httpfake.JSON(200, `{"id":7,"status":"success"}`)},
		{"forgejo", "/api/v1", "/api/v1/repos/o/r/actions/runs?limit=50&page=1&run_number=7", "https://forgejo.example/o/r/actions/runs/7",
			httpfake.JSON(200, `{"total_count":1,"workflow_runs":[{"id":70,"run_number":7,"status":"completed"}]}`)},
	} {
		t.Run(tc.forge, func(t *testing.T) {
			p, err := forge.Resolve("--forge", tc.forge)
			if err != nil {
				t.Fatal(err)
			}
			f := httpfake.New(t)
			f.Expect("GET", tc.path, tc.reply)
			dir := filepath.Join(t.TempDir(), "cassette")
			conn, err := forge.Connect(p, forge.Options{APIURL: f.URL + tc.api, Token: token, Record: dir, Log: zerolog.Nop()}, true)
			if err != nil {
				t.Fatal(err)
			}
			st, err := conn.RunState(context.Background(), "o/r", tc.link)
			if err != nil || !st.Found || !st.Completed {
				t.Fatalf("run state through the recorder: %+v, %v", st, err)
			}
			c, err := cassette.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if c.Meta.Forge != tc.forge || c.Meta.APIURL != f.URL+tc.api || len(c.Interactions) != 1 {
				t.Errorf("cassette meta %+v with %d interactions", c.Meta, len(c.Interactions))
			}
			_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					if b, _ := os.ReadFile(path); strings.Contains(string(b), token) {
						t.Errorf("%s holds the token", filepath.Base(path))
					}
				}
				return nil
			})
		})
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p, _ := forge.Resolve("--forge", "gitlab")
	_, err := forge.Connect(p, forge.Options{APIURL: "https://gitlab.example.com/api/v4", Record: file}, true)
	var ce *forge.ConfigError
	if !errors.As(err, &ce) || !strings.HasPrefix(ce.Field, "--record") {
		t.Fatalf("recording into a file: %v, want a --record configuration error", err)
	}
}

// TestRunStateAsksOnlyAboutTheRepositorysOwnRuns: on every forge a run link that is not one of
// the repository's own run pages (another repository's, or not a CI run page at all) is
// Unknown without a request — the comment is left alone, never finalised on a 404 that only
// says "not here".
func TestRunStateAsksOnlyAboutTheRepositorysOwnRuns(t *testing.T) {
	for _, tc := range []struct{ forge, api string }{{"github", ""}, {"gitlab", "/api/v4"}, {"forgejo", "/api/v1"}} {
		t.Run(tc.forge, func(t *testing.T) {
			p, err := forge.Resolve("--forge", tc.forge)
			if err != nil {
				t.Fatal(err)
			}
			f := httpfake.New(t) // no request is expected: any would fail the test
			conn, err := forge.Connect(p, forge.Options{APIURL: f.URL + tc.api, Token: "t", Log: zerolog.Nop()}, true)
			if err != nil {
				t.Fatal(err)
			}
			for _, link := range []string{
				"https://forge.example/other/repo/actions/runs/7",
				"https://forge.example/other/repo/-/jobs/7",
				"https://ci.example/build/7",
			} {
				st, err := conn.RunState(context.Background(), "o/r", link)
				if err != nil || st != (forge.RunState{Unknown: true}) {
					t.Errorf("%s: %+v, %v; want Unknown", link, st, err)
				}
			}
		})
	}
}

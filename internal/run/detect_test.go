package run

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/pkg/cirelay"
	"github.com/forgectx/forgectx/pkg/prescript"
)

// Without --forge, forgectx run picks forgejo under Forgejo Actions (FORGEJO_ACTIONS or
// GITEA_ACTIONS true, even though those runners also set GITHUB_ACTIONS=true), gitlab under
// GITLAB_CI=true, else github; an explicit --forge always wins.
func TestForgeDetectedFromTheCIEnvironmentExplicitWins(t *testing.T) {
	h := &harness.Harness{Agent: harness.Agent{Name: "triage", Category: "observation", Command: []string{"true"}},
		Profiles: map[string]acquisition.Profile{acquisition.KindWorkItem: {EntityKind: acquisition.KindWorkItem}}}
	tmp := t.TempDir()
	base := map[string]string{"GITHUB_TOKEN": "a", "GITLAB_TOKEN": "b", "FORGEJO_TOKEN": "c", "RUNNER_TEMP": tmp}
	forgejoEnv := map[string]string{"FORGEJO_ACTIONS": "true", "GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://code.example",
		"GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": "a"}
	cases := []struct {
		name  string
		vars  map[string]string
		forge string // --forge
		want  string
	}{
		{"nothing: github", map[string]string{}, "", "github"},
		{"GitHub Actions: github", map[string]string{"GITHUB_ACTIONS": "true"}, "", "github"},
		{"GITLAB_CI=true: gitlab", map[string]string{"GITLAB_CI": "true", "CI_API_V4_URL": "https://gitlab.example/api/v4", "CI_PROJECT_ID": "7"}, "", "gitlab"},
		{"GITLAB_CI=false: github", map[string]string{"GITLAB_CI": "false"}, "", "github"},
		{"FORGEJO_ACTIONS=true: forgejo", forgejoEnv, "", "forgejo"},
		{"GITEA_ACTIONS=true: forgejo", map[string]string{"GITEA_ACTIONS": "true", "GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://code.example", "GITHUB_REPOSITORY": "o/r"}, "", "forgejo"},
		{"Forgejo before GitLab", map[string]string{"GITEA_ACTIONS": "true", "GITLAB_CI": "true", "GITHUB_SERVER_URL": "https://code.example", "GITHUB_REPOSITORY": "o/r"}, "", "forgejo"},
		{"explicit github under Forgejo Actions", forgejoEnv, "github", "github"},
		{"explicit gitlab under Forgejo Actions", forgejoEnv, "gitlab", "gitlab"},
		{"explicit forgejo outside CI", map[string]string{}, "forgejo", "forgejo"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tc.vars {
				env[k] = v
			}
			getenv := func(k string) string { return env[k] }
			if tc.forge == "" {
				if got := forge.Detect(getenv); got != tc.want {
					t.Errorf("forge.Detect = %q, want %q", got, tc.want)
				}
			}
			o := Options{Common: lifecycle.Common{Harness: h, APIURL: "https://forge.example/api/v1"}, Forge: tc.forge, Repo: "o/r", Number: 1, CommentAuthor: "bot", Getenv: getenv}
			if tc.want == "gitlab" {
				o.Repo = "7"
			}
			c, err := resolve(&o, time.Now())
			if err != nil {
				t.Fatalf("resolve: %v", err)
			}
			if c.ref.Forge != tc.want {
				t.Errorf("forge = %q, want %q", c.ref.Forge, tc.want)
			}
		})
	}
}

// A TRIGGER_PAYLOAD that names no entity is logged as a code, never its text.
func TestGitLabTriggerErrorLoggedAsCode(t *testing.T) {
	h := &harness.Harness{Agent: harness.Agent{Name: "triage", Category: "observation", Command: []string{"true"}},
		Profiles: map[string]acquisition.Profile{acquisition.KindWorkItem: {EntityKind: acquisition.KindWorkItem}}}
	payload := t.TempDir() + "/trigger.json"
	if err := writeFileString(payload, `{"object_kind":"secret-marker-text"`); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITLAB_CI": "true", "CI_API_V4_URL": "https://gitlab.example/api/v4", "CI_PROJECT_ID": "7",
		"TRIGGER_PAYLOAD": payload, "CI_PIPELINE_SOURCE": "trigger", "GITLAB_TOKEN": "b", "RUNNER_TEMP": t.TempDir()}
	var logBuf bytes.Buffer
	o := Options{Common: lifecycle.Common{Harness: h, Log: zerolog.New(&logBuf)}, Number: 3, Getenv: func(k string) string { return env[k] }}
	c, err := resolve(&o, time.Now())
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	if c.ref.Forge != "gitlab" || c.ref.Number != 3 {
		t.Errorf("ref = %+v", c.ref)
	}
	log := logBuf.String()
	if !strings.Contains(log, `"code":"trigger_payload_unusable"`) {
		t.Errorf("no trigger_payload_unusable code logged: %s", log)
	}
	if strings.Contains(log, "secret-marker-text") || strings.Contains(log, "TRIGGER_PAYLOAD:") {
		t.Errorf("the log carries the error text: %s", log)
	}
}

func writeFileString(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

// The dotenv report keeps the decision's entries, drops a script output that would shadow the
// run's own keys (the run's value wins), and omits an empty context directory.
func TestDotenvReportRunKeysWin(t *testing.T) {
	d := prescript.Decision{Reason: "r", Outputs: []prescript.KV{{Key: "FORGECTX_STATUS", Value: "forged"}, {Key: "a", Value: "1"}}}
	got, err := cirelay.RenderDotenv(DotenvReport(&d, StatusSuccess, "/tmp/ctx"), cirelay.DotenvLimits{})
	if want := "reason=r\na=1\nskipped=false\nFORGECTX_STATUS=success\nFORGECTX_CONTEXT_DIR=/tmp/ctx\n"; err != nil || string(got) != want {
		t.Errorf("report = %q, %v; want %q", got, err, want)
	}
	got, err = cirelay.RenderDotenv(DotenvReport(nil, StatusCancelled, ""), cirelay.DotenvLimits{})
	if want := "FORGECTX_STATUS=cancelled\n"; err != nil || string(got) != want {
		t.Errorf("report without a decision = %q, %v; want %q", got, err, want)
	}
}

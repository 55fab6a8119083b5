package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/httpfake"
)

// glFixture returns the first element of a real GitLab response body under
// test/fixtures/gitlab/real (doc/api/jobs.md and pipelines.md shapes) with its status set.
func glFixture(t *testing.T, name, st string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "gitlab", "real", name))
	must(t, err)
	var list []map[string]any
	must(t, json.Unmarshal(b, &list))
	v := list[0]
	v["status"] = st
	return v
}

// glNote is a GitLab merge request note in the notes API's shape.
func glNote(id, author int, body string) map[string]any {
	return map[string]any{
		"id": id, "type": nil, "body": body, "attachment": nil,
		"author":     map[string]any{"id": author, "username": fmt.Sprintf("u%d", author), "name": "U", "state": "active"},
		"created_at": "2026-11-20T10:00:00.000Z", "updated_at": "2026-11-20T10:00:00.000Z", "system": false,
		"noteable_id": 9007, "noteable_type": "MergeRequest", "project_id": 42, "resolvable": false,
		"confidential": false, "internal": false, "noteable_iid": 7, "commands_changes": map[string]any{},
	}
}

// TestStatusReconcileGitLab is `status reconcile` on GitLab, as on GitHub: a started note by
// forgectx's own user is finalised to ⚠️ cancelled only when its CI job or pipeline is over
// (GitLab says so, or answers 404) or it is this job (--current-run); it is left alone while
// the job runs (or waits: manual, pending), and when its link is another project's (nothing
// to ask: undetermined). A marker note by anyone else is never touched; a 403 on the jobs API
// is an error, not a guess.
func TestStatusReconcileGitLab(t *testing.T) {
	const (
		project = "acme/widgets"
		web     = "https://gitlab.example.com/acme/widgets"
		self    = 104
	)
	jobLink := func(id int) string { return fmt.Sprintf("%s/-/jobs/%d", web, id) }
	cases := []struct {
		name        string
		repo        string // default project; "42" is the numeric id of test/fixtures/gitlab/common/project.json
		link        string
		current     bool
		path        string // the CI API path asked, "" for none
		reply       httpfake.Reply
		finalized   int
		running     int
		undetermine int
		wantErr     string
	}{
		{name: "job failed", link: jobLink(301), path: "/projects/acme%2Fwidgets/jobs/301", reply: httpfake.JSON(200, glFixture(t, "jobs.json", "failed")), finalized: 1},
		{name: "job canceled", link: jobLink(301), path: "/projects/acme%2Fwidgets/jobs/301", reply: httpfake.JSON(200, glFixture(t, "jobs.json", "canceled")), finalized: 1},
		{name: "job gone", link: jobLink(301), path: "/projects/acme%2Fwidgets/jobs/301", reply: httpfake.JSON(404, `{"message":"404 Not found"}`), finalized: 1},
		{name: "job running", link: jobLink(301), path: "/projects/acme%2Fwidgets/jobs/301", reply: httpfake.JSON(200, glFixture(t, "jobs.json", "running")), running: 1},
		{name: "job manual", link: jobLink(301), path: "/projects/acme%2Fwidgets/jobs/301", reply: httpfake.JSON(200, glFixture(t, "jobs.json", "manual")), running: 1},
		{name: "pipeline success", link: web + "/-/pipelines/77056819", path: "/projects/acme%2Fwidgets/pipelines/77056819", reply: httpfake.JSON(200, glFixture(t, "pipelines.json", "success")), finalized: 1},
		{name: "pipeline pending", link: web + "/-/pipelines/77056819", path: "/projects/acme%2Fwidgets/pipelines/77056819", reply: httpfake.JSON(200, glFixture(t, "pipelines.json", "pending")), running: 1},
		{name: "this job (--current-run)", link: jobLink(9001), current: true, finalized: 1},
		{name: "another project's job", link: "https://gitlab.example.com/acme/other/-/jobs/301", undetermine: 1},
		{name: "numeric project id: its job", repo: "42", link: "https://gitlab.example.com/Acme/Platform/widgets/-/jobs/301",
			path: "/projects/42/jobs/301", reply: httpfake.JSON(200, glFixture(t, "jobs.json", "failed")), finalized: 1},
		// A fork MR pipeline runs in the source project: its job is not found under the target
		// project's id, which must not read as "gone".
		{name: "numeric project id: a fork's job", repo: "42", link: "https://gitlab.example.com/fork/widgets/-/jobs/301", undetermine: 1},
		{name: "jobs API forbidden", link: jobLink(301), path: "/projects/acme%2Fwidgets/jobs/301", reply: httpfake.JSON(403, `{"message":"403 Forbidden"}`), wantErr: "HTTP 403"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := httpfake.New(t)
			started, err := status.Render(nil, status.Status{Agent: agentName, State: status.Started, RunURL: tc.link})
			must(t, err)
			repo, seg := project, "acme%2Fwidgets"
			if tc.repo != "" {
				repo, seg = tc.repo, tc.repo
				proj, err := os.ReadFile(filepath.Join("..", "fixtures", "gitlab", "common", "project.json"))
				must(t, err)
				f.Expect("GET", "/api/v4/projects/42", httpfake.JSON(200, proj))
			}
			f.Expect("GET", "/api/v4/user", httpfake.JSON(200, map[string]any{"id": self, "username": "widgets-ci", "bot": true, "state": "active"}))
			notes := "/api/v4/projects/" + seg + "/merge_requests/7/notes?order_by=created_at&per_page=100&sort=asc"
			f.Expect("GET", notes, httpfake.JSON(200, []any{glNote(1, 101, started), glNote(2, self, started)}))
			if tc.path != "" {
				f.Expect("GET", "/api/v4"+tc.path, tc.reply)
			}
			if tc.finalized > 0 {
				final, err := status.Render(filter.New([]string{"glpat-reconcile-token"}), status.Status{Agent: agentName, State: status.Cancelled, RunURL: tc.link, Detail: run.ReconcileDetail})
				must(t, err)
				body, err := json.Marshal(map[string]string{"body": final})
				must(t, err)
				f.ExpectBody("PUT", "/api/v4/projects/"+seg+"/merge_requests/7/notes/2", body, httpfake.JSON(200, glNote(2, self, final)))
			}
			env := map[string]string{"GITLAB_TOKEN": "glpat-reconcile-token"}
			if tc.current {
				env["GITLAB_CI"], env["CI_JOB_URL"], env["CI_JOB_ID"] = "true", jobLink(9001), "9001"
				env["CI_API_V4_URL"], env["CI_PROJECT_PATH"], env["CI_PROJECT_ID"] = f.URL+"/api/v4", project, "42"
				env["CI_MERGE_REQUEST_IID"], env["CI_COMMIT_SHA"] = "7", headSHA
				env["CI_SERVER_URL"], env["CI_PIPELINE_SOURCE"] = "https://gitlab.example.com", "merge_request_event"
			}
			var logs bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := run.Reconcile(ctx, run.ReconcileOptions{Agent: agentName, Forge: "gitlab", Repo: repo, Number: 7, Kind: "change_proposal",
				APIURL: f.URL + "/api/v4", TokenEnv: "GITLAB_TOKEN", CurrentRun: tc.current, Getenv: func(k string) string { return env[k] },
				Log: zerolog.New(&logs)})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("reconcile error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			must(t, err)
			if res.Comments != 1 || res.Started != 1 || res.Finalized != tc.finalized || res.Running != tc.running || res.Undetermined != tc.undetermine {
				t.Errorf("reconcile = %+v", res)
			}
			if strings.Contains(logs.String(), "glpat-reconcile-token") {
				t.Error("the token appears in the log")
			}
		})
	}
}

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// workflowRun is GET /repos/{owner}/{repo}/actions/runs/{run_id} in GitHub's shape.
func workflowRun(id int64, st, conclusion string) map[string]any {
	var concl any
	if conclusion != "" {
		concl = conclusion
	}
	repo := "https://api.github.com/repos/octo-org/Hello-World"
	return map[string]any{
		"id": id, "name": "forgectx", "node_id": "WFR_kwLOLq3Xz88AAAAB", "head_branch": "main", "head_sha": headSHA,
		"path": ".github/workflows/forgectx.yml", "display_title": "Crash on empty config", "run_number": 42,
		"event": "issues", "status": st, "conclusion": concl, "workflow_id": 161335, "check_suite_id": 414944374,
		"check_suite_node_id": "MDEwOkNoZWNrU3VpdGU0MTQ5NDQzNzQ=", "url": fmt.Sprintf("%s/actions/runs/%d", repo, id),
		"html_url": fmt.Sprintf("https://github.com/octo-org/Hello-World/actions/runs/%d", id), "pull_requests": []any{},
		"created_at": "2026-09-08T11:58:00Z", "updated_at": "2026-09-08T12:03:00Z", "run_attempt": 1,
		"run_started_at": "2026-09-08T11:58:00Z", "jobs_url": fmt.Sprintf("%s/actions/runs/%d/jobs", repo, id),
	}
}

// Orphan reconcile: a status comment left ⏳ started by a job that died is finalised to ⚠️
// cancelled (its CI run link kept) only when its job is over — this run (--current-run), a
// completed run, or a run GitHub no longer knows — and left alone while its run is in
// progress. A marker-carrying "started" comment by anyone but forgectx's identity is never
// touched.
func TestStatusReconcileFinalisesOrphans(t *testing.T) {
	cases := []struct {
		name       string
		linked     int64
		current    bool
		runReply   *httpfake.Reply
		finalized  int
		runningCnt int
	}{
		{name: "completed run", linked: 111, runReply: ptr(httpfake.JSON(200, workflowRun(111, "completed", "cancelled"))), finalized: 1},
		{name: "run gone", linked: 111, runReply: ptr(httpfake.JSON(404, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run","status":"404"}`)), finalized: 1},
		{name: "this run (--current-run)", linked: 123456789, current: true, finalized: 1},
		{name: "run in progress", linked: 111, runReply: ptr(httpfake.JSON(200, workflowRun(111, "in_progress", ""))), runningCnt: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOpts{})
			link := fmt.Sprintf("https://github.com/octo-org/Hello-World/actions/runs/%d", tc.linked)
			started, err := status.Render(nil, status.Status{Agent: agentName, State: status.Started, RunURL: link})
			must(t, err)
			w.sc.Comments = append(w.sc.Comments,
				ghscenario.Comment{ID: 8999, NodeID: "IC_kwDOLq3Xz86AACMo", User: ghscenario.Mallory, Body: started, CreatedAt: clock, UpdatedAt: clock},
				ghscenario.Comment{ID: statusID, NodeID: statusNode, User: ghscenario.Actions, Body: started, CreatedAt: clock, UpdatedAt: clock},
			)
			w.expectCommentList(nil)
			if tc.runReply != nil {
				w.fake.Expect("GET", fmt.Sprintf("/repos/octo-org/Hello-World/actions/runs/%d", tc.linked), *tc.runReply)
			}
			if tc.finalized > 0 {
				final, err := status.Render(filter.New([]string{token}), status.Status{Agent: agentName, State: status.Cancelled, RunURL: link, Detail: run.ReconcileDetail})
				must(t, err)
				w.fake.ExpectBody("PATCH", fmt.Sprintf("/repos/octo-org/Hello-World/issues/comments/%d", statusID), bodyJSON(t, final), httpfake200(w, final))
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := run.Reconcile(ctx, run.ReconcileOptions{Agent: agentName, Getenv: w.getenv, CurrentRun: tc.current, Log: zerolog.New(w.logBuf)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Comments != 1 || res.Started != 1 || res.Finalized != tc.finalized || res.Running != tc.runningCnt {
				t.Errorf("reconcile = %+v", res)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/forgejo"
	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/httpfake"
)

// `forgectx run --forge forgejo` on a pull request whose head has failed checks whose logs
// this forge does not serve (the recorded test/fixtures/forgejo/pull): the completion status
// comment lists them by name without a log and its partial-context line says the check logs
// are unsupported on this forge.
func TestRunForgejoPullRequestShowsFailedChecksWithoutLogs(t *testing.T) {
	w := newWorld(t, worldOpts{})
	hp := filepath.Join(w.dir, "pull.yml")
	must(t, os.WriteFile(hp, []byte(strings.ReplaceAll(gitlabHarness, "{{DIR}}", w.dir)), 0o600))
	h, err := harness.Load(hp)
	must(t, err)
	c, err := cassette.Load("../fixtures/forgejo/pull")
	must(t, err)
	w.fake.ExpectCassette(c) // the precomputed assembly
	w.fake.ExpectCassette(c) // the run's acquisition
	sub := &cassette.Cassette{Meta: c.Meta}
	for _, in := range c.Interactions {
		if strings.Contains(in.Request.URL, "/issues/12/comments") {
			sub.Interactions = append(sub.Interactions, in)
		}
	}
	w.fake.ExpectCassette(sub) // the status lookup
	api := w.fake.URL + "/api/v1"

	p, _ := h.ProfileFor("change_proposal")
	fc, err := forgejo.New(forgejo.Options{APIURL: api, Token: token})
	must(t, err)
	acq, err := fc.Acquire(context.Background(), forge.Ref{Forge: "forgejo", APIURL: api, Repo: "Acme/Widgets", Number: 12}, p)
	must(t, err)
	tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: p, Category: h.Agent.Category, Filter: filter.New(nil)})
	must(t, err)
	tctx := treeContext(t, tree)
	noLog := 0
	for _, f := range tctx.Failed {
		if f.NoLog {
			noLog++
		}
	}
	if noLog == 0 || !strings.Contains(status.PartialLine(tctx.Gaps), "check logs unsupported on this forge") {
		t.Fatalf("test premise: failed checks without logs and an unsupported check_logs gap: %+v", tctx)
	}

	w.env = map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": w.dir, "FORGEJO_ACTIONS": "true", "GITHUB_ACTIONS": "true",
		"GITHUB_SERVER_URL": w.fake.URL, "GITHUB_REPOSITORY": "Acme/Widgets", "GITHUB_RUN_NUMBER": "5", "GITHUB_RUN_ID": "77",
		"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": filepath.Join(w.dir, "fj-event.json"),
		"GITHUB_TOKEN": token, "GITHUB_OUTPUT": filepath.Join(w.dir, "output"), "RUNNER_TEMP": w.env["RUNNER_TEMP"],
		"AGENT_OUT": w.out,
	}
	must(t, os.WriteFile(w.env["GITHUB_EVENT_PATH"], []byte(`{"action":"opened","number":12,"pull_request":{"number":12}}`), 0o600))
	link := w.fake.URL + "/Acme/Widgets/actions/runs/5"
	pipe := filter.New([]string{token})
	startBody, _ := status.Render(pipe, status.Status{Agent: agentName, State: status.Started, RunURL: link})
	finalBody, _ := status.Render(pipe, status.Status{Agent: agentName, State: status.Success, RunURL: link, Context: tctx})
	rcBody, err := status.RenderReceipt(status.Receipt{ID: "fja-77-1", Agent: agentName, Status: "success", InputRevision: tree.IndexSHA256,
		ResultRecordKeys: []string{}, StartedAt: canon.FormatTime(clock), CompletedAt: canon.FormatTime(clock)})
	must(t, err)
	created := func(id int64, body string) httpfake.Reply {
		return httpfake.JSON(201, map[string]any{"id": id, "body": body, "html_url": fmt.Sprintf("%s/Acme/Widgets/pulls/12#issuecomment-%d", w.fake.URL, id),
			"created_at": "2026-09-08T12:00:00Z", "updated_at": "2026-09-08T12:00:00Z", "assets": []any{},
			"user": map[string]any{"id": -2, "login": "forgejo-actions", "full_name": "", "email": ""}})
	}
	w.fake.ExpectBody("POST", "/api/v1/repos/Acme/Widgets/issues/12/comments", sdkBody(t, startBody), created(9101, startBody))
	w.fake.ExpectBody("POST", "/api/v1/repos/Acme/Widgets/issues/12/comments", sdkBody(t, rcBody), created(9102, rcBody))
	w.fake.ExpectBody("PATCH", "/api/v1/repos/Acme/Widgets/issues/comments/9101", sdkBody(t, finalBody), created(9101, finalBody))

	o := w.options()
	o.HarnessPath, o.Forge, o.CommentAuthorID, o.Number, o.Kind = hp, "forgejo", -2, 12, "change_proposal"
	res, err := run.Run(context.Background(), o)
	if err != nil || res.Status != run.StatusSuccess {
		t.Fatalf("run = %+v, %v\n%s", res, err, w.logBuf.String())
	}
	if !strings.Contains(finalBody, "— "+status.NoLogWords+"\n") {
		t.Errorf("test premise: the expected comment lists a check without a log:\n%s", finalBody)
	}
	// Forgejo has no step summary: the summary is in the job log.
	assertSummaryContext(t, w.jobLog.String(), tctx)
	w.assertNoTrees()
}

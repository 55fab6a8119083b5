package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/run"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

// `forgectx run` on a GitHub pull request whose head has failed checks with their logs (the
// recorded test/fixtures/github/pr): the completion status comment lists the failed checks
// with their first error lines and says what the agent did not see; the step summary lists
// them too.
func TestRunGitHubPullRequestShowsFailedChecks(t *testing.T) {
	w := newWorld(t, worldOpts{})
	hp := filepath.Join(w.dir, "pr.yml")
	must(t, os.WriteFile(hp, []byte(strings.ReplaceAll(gitlabHarness, "{{DIR}}", w.dir)), 0o600))
	h, err := harness.Load(hp)
	must(t, err)
	c, err := cassette.Load("../fixtures/github/pr")
	must(t, err)
	w.fake.ExpectCassette(c) // the precomputed assembly
	w.fake.ExpectCassette(c) // the run's acquisition
	sub := &cassette.Cassette{Meta: c.Meta}
	for _, in := range c.Interactions {
		if in.Request.Method == "GET" && strings.Contains(in.Request.URL, "/issues/42/comments") {
			sub.Interactions = append(sub.Interactions, in)
		}
	}
	w.fake.ExpectCassette(sub) // the status comment lookup

	p, _ := h.ProfileFor("change_proposal")
	gc, err := github.New(github.Options{APIURL: w.fake.URL, Token: token, Receipts: github.ReceiptsFromCommentsBy(github.ActionsBotLogin)})
	must(t, err)
	acq, err := gc.Acquire(context.Background(), forge.Ref{Forge: "github", APIURL: w.fake.URL, Repo: "octo-org/Hello-World", Number: 42}, p)
	must(t, err)
	tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: p, Category: h.Agent.Category, Filter: filter.New(nil)})
	must(t, err)
	tctx := treeContext(t, tree)
	failedCheckPremise(t, tree, tctx)

	comments := "/repos/octo-org/Hello-World/issues/42/comments"
	start := render(t, status.Started, "")
	final := renderContext(t, status.Success, "", tctx)
	rb := receiptBody(t, run.StatusSuccess, tree.IndexSHA256)
	w.fake.ExpectBody("POST", comments, bodyJSON(t, start), httpfake.JSON(201, w.restComment(statusID, statusNode, ghscenario.Actions, start, clock)))
	w.fake.ExpectBody("PATCH", "/repos/octo-org/Hello-World/issues/comments/9001", bodyJSON(t, final), httpfake200(w, final))
	w.fake.ExpectBody("POST", comments, bodyJSON(t, rb), httpfake.JSON(201, w.restComment(receiptID1, receiptNode, ghscenario.Actions, rb, clock)))

	o := w.options()
	o.HarnessPath, o.Number, o.Kind = hp, 42, "change_proposal"
	res, err := run.Run(context.Background(), o)
	if err != nil || res.Status != run.StatusSuccess {
		t.Fatalf("run = %+v, %v\n%s", res, err, w.logBuf.String())
	}
	if !strings.Contains(final, "**Failed checks**") || !strings.Contains(final, "\nPartial context: ") {
		t.Errorf("test premise: the expected comment has failed checks and a partial line:\n%s", final)
	}
	assertSummaryContext(t, readFile(t, w.env["GITHUB_STEP_SUMMARY"]), tctx)
	w.assertNoTrees()
	w.assertLogHygiene()
}

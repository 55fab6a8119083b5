package e2e

import (
	"context"
	"encoding/json"
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
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/status"
	"github.com/forgectx/forgectx/test/httpfake"
)

// sdkBody is a comment request body as the Gitea SDK and GitLab client-go encode it
// (encoding/json: HTML characters escaped).
func sdkBody(t testing.TB, body string) []byte {
	b, err := json.Marshal(map[string]string{"body": body})
	must(t, err)
	return b
}

// `forgectx run --forge forgejo` in a Forgejo Actions job: defaults from the job environment
// and event, the recorded issue scenario (test/fixtures/forgejo/issue) served by the loopback
// API, the automatic token's pseudo-user (-2) as the comment identity (no GET /user), then the
// same lifecycle: started comment, agent, receipt, completion edit.
func TestRunForgejoActionsProceed(t *testing.T) {
	// -2: the automatic token's pseudo-user via --comment-author-id (no GET /user); 0: the
	// identity read once from GET /user.
	for _, authorID := range []int64{-2, 0} {
		t.Run(fmt.Sprint(authorID), func(t *testing.T) { forgejoProceed(t, authorID) })
	}
}

func forgejoProceed(t *testing.T, authorID int64) {
	w := newWorld(t, worldOpts{})
	c, err := cassette.Load("../fixtures/forgejo/issue")
	must(t, err)
	w.fake.ExpectCassette(c) // the precomputed assembly
	w.fake.ExpectCassette(c) // the run's acquisition
	var comments cassette.Interaction
	for _, in := range c.Interactions {
		if strings.Contains(in.Request.URL, "/issues/7/comments") {
			comments = in
		}
	}
	w.fake.ExpectCassette(&cassette.Cassette{Meta: c.Meta, Interactions: []cassette.Interaction{comments}}) // the status lookup
	api := w.fake.URL + "/api/v1"

	p, err := w.h.ProfileFor("work_item")
	must(t, err)
	fc, err := forgejo.New(forgejo.Options{APIURL: api, Token: token})
	must(t, err)
	acq, err := fc.Acquire(context.Background(), forge.Ref{Forge: "forgejo", APIURL: api, Repo: "Acme/Widgets", Number: 7}, p)
	must(t, err)
	tree, err := snapshot.Assemble(context.Background(), acq, snapshot.Config{Profile: p, Category: w.h.Agent.Category, Bots: w.h.Bots, Filter: filter.New(nil)})
	must(t, err)

	w.env = map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": w.dir, "FORGEJO_ACTIONS": "true", "GITHUB_ACTIONS": "true",
		"GITHUB_SERVER_URL": w.fake.URL, "GITHUB_REPOSITORY": "Acme/Widgets", "GITHUB_RUN_NUMBER": "5", "GITHUB_RUN_ID": "77",
		"GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": filepath.Join(w.dir, "fj-event.json"),
		"GITHUB_TOKEN": token, "GITHUB_OUTPUT": filepath.Join(w.dir, "output"), "RUNNER_TEMP": w.env["RUNNER_TEMP"],
		"AGENT_OUT": w.out,
	}
	must(t, os.WriteFile(w.env["GITHUB_EVENT_PATH"], []byte(`{"action":"created","issue":{"number":7,"pull_request":null},"comment":{"id":9005}}`), 0o600))
	link := w.fake.URL + "/Acme/Widgets/actions/runs/5"
	pipe := filter.New([]string{token})
	startBody, _ := status.Render(pipe, status.Status{Agent: agentName, State: status.Started, RunURL: link})
	finalBody, _ := status.Render(pipe, status.Status{Agent: agentName, State: status.Success, RunURL: link, Context: treeContext(t, tree)})
	rcBody, err := status.RenderReceipt(status.Receipt{ID: "fja-77-1", Agent: agentName, Status: "success", InputRevision: tree.IndexSHA256,
		ResultRecordKeys: []string{}, StartedAt: canon.FormatTime(clock), CompletedAt: canon.FormatTime(clock)})
	must(t, err)
	created := func(id int64, body string) httpfake.Reply {
		return httpfake.JSON(201, map[string]any{"id": id, "body": body, "html_url": fmt.Sprintf("%s/Acme/Widgets/issues/7#issuecomment-%d", w.fake.URL, id),
			"created_at": "2026-09-08T12:00:00Z", "updated_at": "2026-09-08T12:00:00Z", "assets": []any{},
			"user": map[string]any{"id": -2, "login": "forgejo-actions", "full_name": "", "email": ""}})
	}
	w.fake.ExpectBody("POST", "/api/v1/repos/Acme/Widgets/issues/7/comments", sdkBody(t, startBody), created(9101, startBody))
	w.fake.ExpectBody("POST", "/api/v1/repos/Acme/Widgets/issues/7/comments", sdkBody(t, rcBody), created(9102, rcBody))
	w.fake.ExpectBody("PATCH", "/api/v1/repos/Acme/Widgets/issues/comments/9101", sdkBody(t, finalBody), created(9101, finalBody))

	o := w.options()
	o.Forge, o.CommentAuthorID = "forgejo", authorID
	if authorID == 0 {
		// One GET /user settles the identity for the status lookup and the receipt reader
		// alike (the fake fails on a second).
		w.fake.Expect("GET", "/api/v1/user", httpfake.JSON(200, map[string]any{"id": 150, "login": "release-bot", "full_name": "", "email": ""}))
	}
	res, err := run.Run(context.Background(), o)
	if err != nil || res.Status != run.StatusSuccess || res.ReceiptID != "fja-77-1" {
		t.Fatalf("run = %+v, %v\n%s", res, err, w.logBuf.String())
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(w.out, "index.sha"))); got != tree.IndexSHA256 {
		t.Errorf("agent index sha %s, want %s", got, tree.IndexSHA256)
	}
	if !strings.Contains(readFile(t, w.env["GITHUB_OUTPUT"]), "skipped<<_GitHubActionsFileCommandDelimeter_\nfalse\n") {
		t.Error("the decision was not relayed through Forgejo's GITHUB_OUTPUT")
	}
	w.assertNoTrees()

}

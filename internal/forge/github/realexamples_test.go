package github_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
	"github.com/forgectx/forgectx/test/snapshottest"
)

// octoExamples are GitHub's own REST response examples, copied verbatim from @octokit/openapi
// (test/fixtures/github/openapi-examples.json). Unlike the scenario maker's bodies they were
// written by GitHub, so they carry every field real responses carry (author_association,
// performed_via_github_app, _links, app owners, offset timestamps in steps, …).
func octoExamples(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixturesDir, "openapi-examples.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Examples map[string]any `json:"examples"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f.Examples
}

// deep copies a decoded JSON value.
func deep[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// realPR is a pull request whose REST bodies are GitHub's published examples, each variant
// derived from a real example by changing only the fields under test.
type realPR struct {
	head     string
	storage  *httptest.Server
	authSeen []string // Authorization headers the storage host received
	mu       sync.Mutex
}

const (
	realOwner, realRepo, realNumber = "octocat", "Hello-World", 1347
	realRepoID                      = "MDEwOlJlcG9zaXRvcnkxMjk2MjY5"
	realPRID                        = "MDExOlB1bGxSZXF1ZXN0MQ=="
	realJobCreated                  = "2020-01-20T17:42:30Z"
)

func gqlUser(login, id string) map[string]any {
	return map[string]any{"__typename": "User", "login": login, "id": id}
}

// setup registers every request the adapter must make against fake, built from ex.
func (p *realPR) setup(t *testing.T, fake *httpfake.Server, ex map[string]any) {
	t.Helper()
	repo := fmt.Sprintf("/repos/%s/%s", realOwner, realRepo)
	gql := func(op string, vars map[string]any, data any) {
		body, err := github.GraphQLRequestBody(op, vars)
		if err != nil {
			t.Fatal(err)
		}
		fake.ExpectBody("POST", "/graphql", body, httpfake.JSON(200, map[string]any{"data": data}))
	}
	baseVars := func(extra string) map[string]any {
		return map[string]any{"owner": realOwner, "name": realRepo, "number": realNumber, extra: nil}
	}

	// --- issue comments: issue-comment-items[0] and variants of it.
	c0 := ex["issue-comment-items"].([]any)[0].(map[string]any)
	app := ex["check-run-paginated"].(map[string]any)["check_runs"].([]any)[0].(map[string]any)["app"]
	comment := func(nodeID string, mut func(c map[string]any)) any {
		c := deep(t, c0)
		c["node_id"] = nodeID
		if mut != nil {
			mut(c)
		}
		return c
	}
	setUser := func(c map[string]any, login, nodeID, typ string) {
		u := c["user"].(map[string]any)
		u["login"], u["node_id"], u["type"] = login, nodeID, typ
	}
	comments := []any{
		deep(t, c0), // verbatim: octocat, a User, COLLABORATOR
		comment("IC_kwDObotcomment", func(c map[string]any) { // an App's installation token
			setUser(c, "octo-app[bot]", "BOT_kgDOAppBot", "Bot")
			c["performed_via_github_app"] = deep(t, app)
			c["author_association"] = "NONE"
		}),
		comment("IC_kwDOnulluser", func(c map[string]any) { c["user"] = nil }),
		comment("IC_kwDOghostuser", func(c map[string]any) { setUser(c, "ghost", "MDQ6VXNlcjEwMTM3", "User") }),
		comment("IC_kwDOviaapp", func(c map[string]any) { // a human acting through an App: still the human
			setUser(c, "monalisa", "MDQ6VXNlcjI=", "User")
			c["performed_via_github_app"] = deep(t, app)
			c["created_at"] = "2011-04-14T18:00:49+02:00"
		}),
		comment("", func(c map[string]any) { delete(c, "node_id") }), // no canonical ID
	}

	// --- reviews: pull-request-review-items[0] (APPROVED), pull-request-review-3 (DISMISSED).
	r0 := ex["pull-request-review-items"].([]any)[0].(map[string]any)
	review := func(nodeID, state string, mut func(r map[string]any)) any {
		r := deep(t, r0)
		r["node_id"], r["state"] = nodeID, state
		if mut != nil {
			mut(r)
		}
		return r
	}
	dismissed := deep(t, ex["pull-request-review-3"].(map[string]any))
	dismissed["node_id"] = "PRR_kwDOdismissed"
	reviews := []any{
		deep(t, r0),
		dismissed,
		review("PRR_kwDOpending", "PENDING", func(r map[string]any) { delete(r, "submitted_at") }),
		review("PRR_kwDObotreview", "COMMENTED", func(r map[string]any) { setUser(r, "octo-app[bot]", "BOT_kgDOAppBot", "Bot") }),
		review("PRR_kwDOnosubmit", "CHANGES_REQUESTED", func(r map[string]any) { delete(r, "submitted_at") }),
		review("PRR_kwDOforgejo", "REQUEST_CHANGES", nil),
	}

	// --- checks: check-run-paginated's run (octoapp, not Actions) and Actions variants.
	cr0 := ex["check-run-paginated"].(map[string]any)["check_runs"].([]any)[0].(map[string]any)
	p.head = cr0["head_sha"].(string)
	actionsApp := deep(t, cr0["app"].(map[string]any))
	actionsApp["slug"], actionsApp["name"], actionsApp["id"], actionsApp["node_id"] = "github-actions", "GitHub Actions", 15368, "MDM6QXBwMTUzNjg="
	t1, t2 := "2020-01-20T17:42:40Z", "2020-01-20T17:44:39Z"
	type ck struct {
		id                 int64
		status, conclusion string
		started, completed string
		headSHA            string
		log                string // "": no log request; "ok", "big", "gone"
		noJobCreatedAt     bool
	}
	checks := []ck{
		{id: 101, status: "completed", conclusion: "startup_failure", completed: t2, log: "ok"},
		{id: 102, status: "completed", conclusion: "stale", started: t1, completed: t2, log: "ok"},
		{id: 103, status: "completed", conclusion: "action_required", started: t1, completed: t2, log: "gone"},
		{id: 104, status: "completed", conclusion: "neutral", started: t1, completed: t2},
		{id: 105, status: "completed", conclusion: "skipped", completed: t2},
		{id: 106, status: "completed", conclusion: "cancelled", started: t1, completed: t2},
		{id: 107, status: "waiting"},
		{id: 108, status: "requested"},
		{id: 109, status: "pending"},
		{id: 110, status: "queued"},
		{id: 111, status: "in_progress", started: t1},
		{id: 112, status: "completed", conclusion: "failure", completed: t2}, // ordinary failure without start: invalid
		{id: 113, status: "completed", conclusion: "success", started: t1, completed: t2, headSHA: "f83a356604ae3c5d03e1b46ef4d1ca77d64a90b0"}, // other revision
		{id: 114, status: "completed", conclusion: "exploded", started: t1, completed: t2},                                                     // unknown conclusion
		{id: 115, status: "completed", conclusion: "timed_out", started: t1, completed: t2, log: "big"},
		{id: 116, status: "completed", conclusion: "success", started: t1, completed: t2, noJobCreatedAt: true},
		{id: 117, status: "completed", conclusion: "failure", started: t1, completed: t2, log: "ok"},
		{id: 118, status: "weird"}, // unknown status
	}
	runs := []any{deep(t, cr0)} // verbatim: octoapp has no immutable creation time → invalid_metadata
	job0 := ex["job-paginated"].(map[string]any)["jobs"].([]any)[0].(map[string]any)
	wf := deep(t, ex["workflow-run-paginated"].(map[string]any))
	wfRun := wf["workflow_runs"].([]any)[0].(map[string]any)
	wfRun["head_sha"] = p.head
	runID := int64(wfRun["id"].(float64))
	jobs := []any{}
	orNil := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	for _, c := range checks {
		r := deep(t, cr0)
		r["id"], r["node_id"], r["name"] = c.id, fmt.Sprintf("CR_kwDOcheck%d", c.id), fmt.Sprintf("job %d", c.id)
		r["status"], r["conclusion"] = c.status, orNil(c.conclusion)
		r["started_at"], r["completed_at"] = orNil(c.started), orNil(c.completed)
		r["app"] = actionsApp
		if c.headSHA != "" {
			r["head_sha"] = c.headSHA
		}
		runs = append(runs, r)
		j := deep(t, job0)
		j["id"], j["run_id"], j["node_id"], j["head_sha"] = c.id, runID, fmt.Sprintf("CR_kwDOcheck%d", c.id), r["head_sha"]
		j["status"], j["conclusion"] = c.status, orNil(c.conclusion)
		j["started_at"], j["completed_at"] = orNil(c.started), orNil(c.completed)
		if !c.noJobCreatedAt {
			j["created_at"] = realJobCreated
			if c.id == 102 {
				j["created_at"] = "2020-01-20T09:42:30-08:00" // offset form: normalised to UTC
			}
		}
		jobs = append(jobs, j)
	}
	// 116's job is the published job example itself, which has no created_at.
	jobs[len(jobs)-3] = func() any {
		j := deep(t, job0)
		j["id"], j["run_id"], j["head_sha"] = 116, runID, p.head
		return j
	}()

	// --- the log storage host: a different origin than the API, which must never see the token.
	p.storage = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p.mu.Lock()
		p.authSeen = append(p.authSeen, req.Header.Get("Authorization"))
		p.mu.Unlock()
		switch {
		case strings.HasSuffix(req.URL.Path, "/big.txt"):
			w.Write([]byte(strings.Repeat("x", ghscenario.MaxSourceBytes+1)))
		default:
			fmt.Fprintf(w, "2020-01-20T17:42:41.0000000Z log of %s\n", req.URL.Path)
		}
	}))
	t.Cleanup(p.storage.Close)

	// --- register, in the order the adapter's readers don't care about.
	gql("Entity", map[string]any{"owner": realOwner, "name": realRepo, "number": realNumber, "labelsAfter": nil},
		map[string]any{"repository": map[string]any{"id": realRepoID, "nameWithOwner": realOwner + "/" + realRepo,
			"issueOrPullRequest": map[string]any{
				"__typename": "PullRequest", "id": realPRID, "number": realNumber, "title": "Amazing new feature",
				"body": "Please pull these awesome changes in!", "pullRequestState": "OPEN", "merged": false,
				"createdAt": "2011-01-26T19:01:12Z", "updatedAt": "2011-01-26T19:01:12Z", "headRefOid": p.head,
				"author":        gqlUser("octocat", "MDQ6VXNlcjE="),
				"comments":      map[string]any{"totalCount": len(comments)},
				"reviews":       map[string]any{"totalCount": len(reviews)},
				"reviewThreads": map[string]any{"totalCount": 1},
				"labels": map[string]any{"totalCount": 1, "pageInfo": map[string]any{"hasNextPage": false, "endCursor": "Y3Vyc29yOnYyOpHOAAAAAQ=="},
					"nodes": []any{map[string]any{"name": "bug"}}},
			}}})
	// The REST lists answer late, so the GraphQL thread read sees the bot first: the actor's
	// login must still be the one of its first reference in acquisition order (REST's).
	slow := func(r httpfake.Reply) httpfake.Reply { r.Delay = 50 * time.Millisecond; return r }
	fake.Expect("GET", repo+fmt.Sprintf("/issues/%d/comments?per_page=100", realNumber), slow(httpfake.JSON(200, comments)))
	fake.Expect("GET", repo+fmt.Sprintf("/pulls/%d/reviews?per_page=100", realNumber), slow(httpfake.JSON(200, reviews)))
	gql("Dismissals", baseVars("after"), map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
		"timelineItems": map[string]any{"pageInfo": map[string]any{"hasNextPage": false, "endCursor": nil}, "nodes": []any{
			map[string]any{"__typename": "ReviewDismissedEvent", "id": "RDE_kwDOdismissal", "createdAt": "2019-11-18T10:00:00Z",
				"actor": gqlUser("monalisa", "MDQ6VXNlcjI="), "review": map[string]any{"id": "PRR_kwDOdismissed"}},
		}}}}})
	gql("Threads", baseVars("after"), map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
		"reviewThreads": map[string]any{"totalCount": 1, "pageInfo": map[string]any{"hasNextPage": false, "endCursor": "Y3Vyc29yOnYyOpHOAAAAAQ=="},
			"nodes": []any{map[string]any{
				// A file-level comment (subject_type file): no line, start line or original line.
				"id": "PRRT_kwDOthread1", "isResolved": true, "isOutdated": true, "path": "file1.txt",
				"line": nil, "startLine": nil, "originalLine": nil, "originalStartLine": nil, "diffSide": "RIGHT", "startDiffSide": nil,
				"resolvedBy": map[string]any{"login": "octocat", "id": "MDQ6VXNlcjE="},
				"comments": map[string]any{"totalCount": 3, "pageInfo": map[string]any{"hasNextPage": false, "endCursor": "Y3Vyc29yOnYyOpHOAAAAAg=="},
					"nodes": []any{
						map[string]any{"id": "PRRC_kwDOfirst", "body": "Great stuff!", "createdAt": "2011-04-14T16:00:49Z", "updatedAt": "2011-04-14T16:00:49Z",
							"isMinimized": false, "author": gqlUser("hubot", "MDQ6VXNlcjM="), "replyTo": nil,
							"pullRequestReview": map[string]any{"id": "MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA="},
							"commit":            map[string]any{"oid": p.head}, "originalCommit": map[string]any{"oid": "9c48853fa3dc5c1c3d6f1f1cd1f2743e72652840"}},
						map[string]any{"id": "PRRC_kwDOreply", "body": "Thanks", "createdAt": "2011-04-14T17:00:49Z", "updatedAt": "2011-04-14T17:00:49Z",
							"isMinimized": false, "author": nil, "replyTo": map[string]any{"id": "PRRC_kwDOfirst"},
							"pullRequestReview": map[string]any{"id": "MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA="},
							"commit":            nil, "originalCommit": map[string]any{"oid": "9c48853fa3dc5c1c3d6f1f1cd1f2743e72652840"}},
						// The App's bot again: GraphQL spells its login without "[bot]".
						map[string]any{"id": "PRRC_kwDObotreply", "body": "Done", "createdAt": "2011-04-14T18:00:49Z", "updatedAt": "2011-04-14T18:00:49Z",
							"isMinimized": false, "author": map[string]any{"__typename": "Bot", "login": "octo-app", "id": "BOT_kgDOAppBot"},
							"replyTo": map[string]any{"id": "PRRC_kwDOfirst"}, "pullRequestReview": map[string]any{"id": "MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA="},
							"commit": nil, "originalCommit": map[string]any{"oid": "9c48853fa3dc5c1c3d6f1f1cd1f2743e72652840"}},
					}},
			}}}}}})
	fake.Expect("GET", repo+"/commits/"+p.head+"/check-runs?filter=all&per_page=100",
		httpfake.JSON(200, map[string]any{"total_count": len(runs), "check_runs": runs}))
	wf["total_count"] = 1
	fake.Expect("GET", repo+"/actions/runs?head_sha="+p.head+"&per_page=100", httpfake.JSON(200, wf))
	fake.Expect("GET", repo+fmt.Sprintf("/actions/runs/%d/jobs?filter=all&per_page=100", runID),
		httpfake.JSON(200, map[string]any{"total_count": len(jobs), "jobs": jobs}))
	for _, c := range checks {
		path := fmt.Sprintf("%s/actions/jobs/%d/logs", repo, c.id)
		switch c.log {
		case "ok":
			fake.Expect("GET", path, httpfake.Redirect(fmt.Sprintf("%s/actions-results/job-%d.txt?sig=SAS%d&se=2026-11-30T08%%3A00%%3A00Z", p.storage.URL, c.id, c.id)))
		case "big":
			fake.Expect("GET", path, httpfake.Redirect(p.storage.URL+"/actions-results/big.txt?sig=SAS"))
		case "gone":
			// Logs past their retention: GitHub answers 410 Gone.
			fake.Expect("GET", path, httpfake.JSON(410, `{"message":"Gone","documentation_url":"https://docs.github.com/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run"}`))
		}
	}

	// --- permissions: octocat is the published admin example; monalisa is not a collaborator
	// (404); hubot holds a custom role whose base is write.
	fake.Expect("GET", repo+"/collaborators/octocat/permission", httpfake.JSON(200, ex["repository-collaborator-permission-response-if-user-has-admin-permissions"]))
	fake.Expect("GET", repo+"/collaborators/monalisa/permission", httpfake.JSON(404, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user","status":"404"}`))
	custom := deep(t, ex["repository-collaborator-permission-response-if-user-has-admin-permissions"].(map[string]any))
	custom["permission"], custom["role_name"] = "write", "docs-reviewer"
	custom["user"].(map[string]any)["login"] = "hubot"
	fake.Expect("GET", repo+"/collaborators/hubot/permission", httpfake.JSON(200, custom))
}

// GitHub's published example bodies, and variants differing only in the field under test,
// land in the acquisition exactly as the spec's GitHub mappings say: node IDs, Bot and ghost
// and null users, PENDING reviews without submitted_at, every check status and conclusion
// (non-Actions apps, startup_failure, stale, waiting/requested/pending), job creation times,
// the log redirect to another host (followed, without the token), an oversized log, an
// expired log, and the collaborator role_name.
func TestPublishedGitHubExamplesMapPerTheSpec(t *testing.T) {
	ex := octoExamples(t)
	fake := httpfake.New(t)
	p := &realPR{}
	p.setup(t, fake, ex)
	opts := fastOptions(fake.URL)
	cl, err := github.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	profile := testProfile(acquisition.KindChangeProposal)
	a, err := cl.Acquire(ctx, forge.Ref{Forge: "github", Repo: realOwner + "/" + realRepo, Number: realNumber}, profile)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("entity", func(t *testing.T) {
		if a.Source.RepositoryID != realRepoID || a.Source.Repository != "octocat/hello-world" {
			t.Errorf("source = %+v", a.Source)
		}
		if a.Entity.ID != realPRID || a.Entity.State != "open" || a.Entity.HeadSHA != p.head || a.Entity.Kind != acquisition.KindChangeProposal {
			t.Errorf("entity = %+v", a.Entity)
		}
	})

	byID := map[string]acquisition.Comment{}
	for _, c := range a.Comments {
		byID[c.ID] = c
	}
	t.Run("comments", func(t *testing.T) {
		for _, tc := range []struct {
			id, author, login, created string
		}{
			{"MDEyOklzc3VlQ29tbWVudDE=", "MDQ6VXNlcjE=", "octocat", "2011-04-14T16:00:49Z"},
			{"IC_kwDObotcomment", "BOT_kgDOAppBot", "octo-app[bot]", "2011-04-14T16:00:49Z"},
			{"IC_kwDOnulluser", "<nil>", "<nil>", "2011-04-14T16:00:49Z"},
			{"IC_kwDOghostuser", "<nil>", "<nil>", "2011-04-14T16:00:49Z"},
			{"IC_kwDOviaapp", "MDQ6VXNlcjI=", "monalisa", "2011-04-14T16:00:49Z"},
			{"PRRC_kwDOfirst", "MDQ6VXNlcjM=", "hubot", "2011-04-14T16:00:49Z"},
			{"PRRC_kwDOreply", "<nil>", "<nil>", "2011-04-14T17:00:49Z"},
			{"PRRC_kwDObotreply", "BOT_kgDOAppBot", "octo-app", "2011-04-14T18:00:49Z"},
		} {
			c, ok := byID[tc.id]
			if !ok {
				t.Errorf("comment %s missing", tc.id)
				continue
			}
			if str(c.Author.ID) != tc.author || str(c.Author.Login) != tc.login || c.CreatedAt != tc.created {
				t.Errorf("comment %s: author %s/%s created %s, want %s/%s %s", tc.id, str(c.Author.ID), str(c.Author.Login), c.CreatedAt, tc.author, tc.login, tc.created)
			}
		}
		if c := byID["MDEyOklzc3VlQ29tbWVudDE="]; c.Body != "Me too" {
			t.Errorf("body = %q", c.Body)
		}
		if len(a.Comments) != 8 {
			t.Errorf("%d comments, want 8 (the one without node_id omitted)", len(a.Comments))
		}
		if got := gapCount(a.Outcomes.Comments, acquisition.GapInvalidMetadata); got != 1 {
			t.Errorf("comments invalid_metadata = %d, want 1 (no node_id): %+v", got, a.Outcomes.Comments)
		}
		if gapCount(a.Outcomes.Comments, acquisition.GapFetchFailed) != 0 {
			t.Errorf("comments fetch_failed: %+v", a.Outcomes.Comments)
		}
	})

	t.Run("reviews", func(t *testing.T) {
		got := map[string]acquisition.Review{}
		for _, r := range a.Reviews {
			got[r.ID] = r
		}
		if len(a.Reviews) != 3 {
			t.Errorf("%d reviews, want 3: %+v", len(a.Reviews), a.Reviews)
		}
		if r := got["MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA="]; r.State != "approved" || r.SubmittedAt != "2019-11-17T17:43:43Z" ||
			r.ReviewedSHA != "ecdd80bb57125d7ba9641ffaa4d7d2c19d3f3091" || str(r.Author.ID) != "MDQ6VXNlcjE=" || r.DismissedBy != nil {
			t.Errorf("approved review = %+v", r)
		}
		d := got["PRR_kwDOdismissed"]
		if d.State != "dismissed" || d.DismissedBy == nil || str(d.DismissedBy.ID) != "MDQ6VXNlcjI=" || str(d.DismissedAt) != "2019-11-18T10:00:00Z" {
			t.Errorf("dismissed review = %+v by %v", d, d.DismissedBy)
		}
		if r := got["PRR_kwDObotreview"]; r.State != "commented" || str(r.Author.ID) != "BOT_kgDOAppBot" {
			t.Errorf("bot review = %+v", r)
		}
		if _, ok := got["PRR_kwDOpending"]; ok {
			t.Error("PENDING review kept")
		}
		// No submitted_at on a submitted review, and Forgejo's REQUEST_CHANGES: 2 invalid.
		if n := gapCount(a.Outcomes.Reviews, acquisition.GapInvalidMetadata); n != 2 {
			t.Errorf("reviews invalid_metadata = %d, want 2: %+v", n, a.Outcomes.Reviews)
		}
	})

	t.Run("threads", func(t *testing.T) {
		if len(a.Threads) != 1 {
			t.Fatalf("threads = %+v", a.Threads)
		}
		th := a.Threads[0]
		if th.ID != "PRRT_kwDOthread1" || th.Line != 0 || th.StartLine != 0 || th.OriginalLine != 0 || th.Side != "right" ||
			!th.Resolved || !th.Outdated || str(th.ResolvedBy.ID) != "MDQ6VXNlcjE=" || th.CreatedAt != "2011-04-14T16:00:49Z" ||
			th.ReviewID != "MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA=" || th.ReviewedSHA != "9c48853fa3dc5c1c3d6f1f1cd1f2743e72652840" {
			t.Errorf("thread = %+v", th)
		}
		if strings.Join(th.CommentIDs, ",") != "PRRC_kwDOfirst,PRRC_kwDOreply,PRRC_kwDObotreply" || len(th.Replies) != 2 ||
			th.Replies[0] != (acquisition.Reply{ID: "PRRC_kwDOreply", ParentID: "PRRC_kwDOfirst"}) {
			t.Errorf("thread order/replies = %v %+v", th.CommentIDs, th.Replies)
		}
	})

	t.Run("checks", func(t *testing.T) {
		got := map[string]acquisition.Check{}
		for _, c := range a.Checks {
			got[c.ID] = c
		}
		b := func(v bool) *bool { return &v }
		t1, t2 := "2020-01-20T17:42:40Z", "2020-01-20T17:44:39Z"
		for _, tc := range []struct {
			id                          int
			status, conclusion          string
			started, completed, created string
			never                       *bool
			log                         string
		}{
			{101, "completed", "failure", "", t2, realJobCreated, b(true), acquisition.LogFetched},
			{102, "completed", "stale", t1, t2, "2020-01-20T17:42:30Z", b(false), acquisition.LogFetched},
			{103, "completed", "action_required", t1, t2, realJobCreated, b(false), acquisition.LogFetchFailed},
			{104, "completed", "neutral", t1, t2, realJobCreated, b(false), ""},
			{105, "completed", "skipped", "", t2, realJobCreated, b(true), ""},
			{106, "completed", "cancelled", t1, t2, realJobCreated, b(false), ""},
			{107, "queued", "", "", "", realJobCreated, nil, ""},
			{108, "queued", "", "", "", realJobCreated, nil, ""},
			{109, "queued", "", "", "", realJobCreated, nil, ""},
			{110, "queued", "", "", "", realJobCreated, nil, ""},
			{111, "in_progress", "", t1, "", realJobCreated, nil, ""},
			{115, "completed", "timed_out", t1, t2, realJobCreated, b(false), acquisition.LogSourceTooLarge},
			{117, "completed", "failure", t1, t2, realJobCreated, b(false), acquisition.LogFetched},
		} {
			id := fmt.Sprintf("CR_kwDOcheck%d", tc.id)
			c, ok := got[id]
			if !ok {
				t.Errorf("check %d missing", tc.id)
				continue
			}
			delete(got, id)
			if c.Status != tc.status || c.Conclusion != tc.conclusion || c.StartedAt != tc.started || c.CompletedAt != tc.completed ||
				c.CreatedAt != tc.created || c.HeadSHA != p.head || (c.NeverStarted == nil) != (tc.never == nil) ||
				(c.NeverStarted != nil && *c.NeverStarted != *tc.never) {
				t.Errorf("check %d = %+v never_started=%v", tc.id, c, c.NeverStarted)
			}
			switch {
			case tc.log == "" && c.Log != nil:
				t.Errorf("check %d: unselected log read (%s)", tc.id, c.Log.Outcome)
			case tc.log != "" && (c.Log == nil || c.Log.Outcome != tc.log):
				t.Errorf("check %d: log %+v, want %s", tc.id, c.Log, tc.log)
			case tc.log == acquisition.LogSourceTooLarge && len(c.Log.Content) != 0:
				t.Errorf("check %d: oversized log kept %d bytes", tc.id, len(c.Log.Content))
			case tc.log == acquisition.LogFetched && !strings.Contains(string(c.Log.Content), fmt.Sprintf("job-%d.txt", tc.id)):
				t.Errorf("check %d: log content %q", tc.id, c.Log.Content)
			}
		}
		for id := range got {
			t.Errorf("unexpected check %s retained", id)
		}
		// octoapp (no immutable creation time), 112 (ordinary failure without start), 113
		// (another revision), 114 (unknown conclusion), 116 (job without created_at), 118
		// (unknown status).
		if n := gapCount(a.Outcomes.Checks, acquisition.GapInvalidMetadata); n != 6 {
			t.Errorf("checks invalid_metadata = %d, want 6: %+v", n, a.Outcomes.Checks)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.authSeen) != 4 {
			t.Errorf("storage host got %d requests, want 4 (101, 102, 115, 117)", len(p.authSeen))
		}
		for _, h := range p.authSeen {
			if h != "" {
				t.Errorf("the log storage host received an Authorization header")
			}
		}
	})

	t.Run("actors", func(t *testing.T) {
		want := map[string]struct {
			kind, role string
			verified   bool
		}{
			"MDQ6VXNlcjE=":   {"human", "admin", true},  // published example: role_name admin
			"MDQ6VXNlcjI=":   {"human", "<nil>", false}, // 404: not a collaborator
			"MDQ6VXNlcjM=":   {"human", "write", true},  // custom role on a write base
			"BOT_kgDOAppBot": {"bot", "<nil>", false},   // type Bot: no permission lookup
		}
		if len(a.Actors) != len(want) {
			t.Errorf("actors = %d, want %d (ghost and null users have no row)", len(a.Actors), len(want))
		}
		for _, ac := range a.Actors {
			w, ok := want[ac.ID]
			if !ok {
				t.Errorf("unexpected actor %s (%s)", ac.ID, str(ac.Login))
				continue
			}
			if ac.ID == "BOT_kgDOAppBot" && str(ac.Login) != "octo-app[bot]" {
				t.Errorf("bot login %s: not the first reference's (REST) spelling", str(ac.Login))
			}
			if ac.Kind != w.kind || str(ac.Role) != w.role || ac.RoleVerified != w.verified {
				t.Errorf("actor %s = %s %s %v, want %+v", ac.ID, ac.Kind, str(ac.Role), ac.RoleVerified, w)
			}
		}
	})

	t.Run("assembles into a verified snapshot", func(t *testing.T) {
		assembleAndVerify(t, a, profile, []snapshot.BotIdentity{{ID: "BOT_kgDOAppBot", BotRole: "ci"}})
	})
}

func gapCount(gs []acquisition.Gap, code string) int {
	for _, g := range gs {
		if g.Code == code {
			return g.Count
		}
	}
	return 0
}

// assembleAndVerify assembles a for the observation category and checks that every JSON
// document validates against the project and the published bundles and that `forgectx verify`
// accepts the tree.
func assembleAndVerify(t *testing.T, a *acquisition.Acquisition, profile acquisition.Profile, bots []snapshot.BotIdentity) {
	t.Helper()
	tree, err := snapshot.Assemble(context.Background(), a, snapshot.Config{Profile: profile, Category: "observation", Bots: bots, Filter: filter.New(nil)})
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	snapshottest.Check(t, tree)
}

package forgejo

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
	"github.com/forgectx/forgectx/test/snapshottest"
)

// subPathTransport sends requests for a self-managed instance under a sub-path on a
// non-default port to the fake, stripping the sub-path, and remembers what the client asked.
type subPathTransport struct {
	target *url.URL
	prefix string
	mu     sync.Mutex
	seen   []string
}

func (s *subPathTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.seen = append(s.seen, strings.ToLower(req.URL.Scheme+"://"+req.URL.Host)+req.URL.EscapedPath())
	s.mu.Unlock()
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = s.target.Scheme, s.target.Host, s.target.Host
	out.URL.Path, out.URL.RawPath = strings.TrimPrefix(req.URL.Path, s.prefix), ""
	return http.DefaultTransport.RoundTrip(out)
}

// Bodies in the shapes Forgejo (v9–v11) serialises: timestamps in the server's local zone
// (+02:00), an unset timestamp as the Unix epoch in that zone, `user: null` with `team` on a
// team review request, the dismissed flag beside the original state, stale/official flags,
// review comments with `resolver`, `position` (new side) or `original_position` (old side).
const (
	rwHead = "4c5f1e0d9b8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d"
	rwUser = `{"id":%d,"login":"%s","login_name":"","source_id":0,"full_name":"","email":"%s@noreply.example.com","avatar_url":"https://example.com:3443/forgejo/avatars/x","html_url":"https://example.com:3443/forgejo/%s","language":"","is_admin":false,"last_login":"0001-01-01T00:00:00Z","created":"2024-01-02T10:00:00+02:00","restricted":false,"active":false,"prohibit_login":false,"location":"","pronouns":"","website":"","description":"","visibility":"public","followers_count":0,"following_count":0,"starred_repos_count":0,"username":"%s"}`
	rwRepo = `{"id":77,"owner":` + `{"id":1,"login":"Acme","login_name":"","full_name":"","email":"","avatar_url":"","language":"","is_admin":false,"last_login":"0001-01-01T00:00:00Z","created":"2024-01-02T10:00:00+02:00","restricted":false,"active":false,"prohibit_login":false,"visibility":"public","username":"Acme"}` +
		`,"name":"Widgets","full_name":"Acme/Widgets","description":"","empty":false,"private":false,"fork":false,"template":false,"parent":null,"mirror":false,"size":120,"language":"Go","languages_url":"https://example.com:3443/forgejo/api/v1/repos/Acme/Widgets/languages","html_url":"https://example.com:3443/forgejo/Acme/Widgets","url":"https://example.com:3443/forgejo/api/v1/repos/Acme/Widgets","link":"","ssh_url":"ssh://git@example.com:2222/Acme/Widgets.git","clone_url":"https://example.com:3443/forgejo/Acme/Widgets.git","original_url":"","website":"","stars_count":0,"forks_count":0,"watchers_count":1,"open_issues_count":0,"open_pr_counter":1,"release_counter":0,"default_branch":"main","archived":false,"created_at":"2024-01-02T10:00:00+02:00","updated_at":"2024-03-01T12:00:00+02:00","archived_at":"1970-01-01T01:00:00+01:00","permissions":{"admin":true,"push":true,"pull":true},"has_issues":true,"internal_tracker":{"enable_time_tracker":true,"allow_only_contributors_to_track_time":true,"enable_issue_dependencies":true},"has_wiki":true,"wiki_branch":"main","globally_editable_wiki":false,"has_pull_requests":true,"has_projects":true,"has_releases":true,"has_packages":true,"has_actions":true,"ignore_whitespace_conflicts":false,"allow_merge_commits":true,"allow_rebase":true,"allow_rebase_explicit":true,"allow_squash_merge":true,"allow_fast_forward_only_merge":true,"allow_rebase_update":true,"default_delete_branch_after_merge":false,"default_merge_style":"merge","default_allow_maintainer_edit":false,"default_update_style":"merge","avatar_url":"","internal":false,"mirror_interval":"","object_format_name":"sha1","mirror_updated":"0001-01-01T00:00:00Z","repo_transfer":null,"topics":[]}`
)

func rwUserJSON(id int, login string) string {
	return strings.NewReplacer("%d", itoa(id), "%s", login).Replace(rwUser)
}

func itoa(n int) string { return strconv.Itoa(n) }

func rwReview(id int, user, state string, dismissed, stale, official bool, submitted string) string {
	b := func(v bool) string {
		if v {
			return "true"
		}
		return "false"
	}
	return `{"id":` + itoa(id) + `,"user":` + user + `,"team":null,"state":"` + state + `","body":"review ` + itoa(id) + `","commit_id":"` + rwHead +
		`","stale":` + b(stale) + `,"official":` + b(official) + `,"dismissed":` + b(dismissed) + `,"comments_count":1,"submitted_at":"` + submitted +
		`","updated_at":"` + submitted + `","html_url":"https://example.com:3443/forgejo/Acme/Widgets/pulls/12#issuecomment-` + itoa(id) + `","pull_request_url":"https://example.com:3443/forgejo/Acme/Widgets/pulls/12"}`
}

func rwReviewComment(id, review int, user, resolver string, pos, orig int, created string) string {
	return `[{"id":` + itoa(id) + `,"body":"note ` + itoa(id) + `","user":` + user + `,"resolver":` + resolver + `,"pull_request_review_id":` + itoa(review) +
		`,"created_at":"` + created + `","updated_at":"` + created + `","path":"src/main.go","commit_id":"` + rwHead + `","original_commit_id":"` + rwHead +
		`","diff_hunk":"@@ -1,7 +1,10 @@\n package main\n+// x","position":` + itoa(pos) + `,"original_position":` + itoa(orig) +
		`,"html_url":"https://example.com:3443/forgejo/Acme/Widgets/pulls/12/files#issuecomment-` + itoa(id) + `","pull_request_url":"https://example.com:3443/forgejo/Acme/Widgets/pulls/12"}]`
}

func rwTask(id int, status, sha, created, started, updated string) string {
	return `{"id":` + itoa(id) + `,"name":"test (` + status + `)","head_branch":"feature","head_sha":"` + sha + `","run_number":9,"event":"pull_request","display_title":"Add caching","status":"` + status +
		`","workflow_id":"ci.yml","url":"https://example.com:3443/forgejo/Acme/Widgets/actions/runs/9","created_at":"` + created + `","updated_at":"` + updated + `","run_started_at":"` + started + `"}`
}

// TestRealForgejoShapesMapEveryRow feeds Forgejo-shaped bodies through a sub-path install on a
// non-default port and checks the mapping rows and null/epoch fields.
func TestRealForgejoShapesMapEveryRow(t *testing.T) {
	alice, bob, carol, dave := rwUserJSON(1001, "alice"), rwUserJSON(1002, "bob"), rwUserJSON(1003, "carol"), rwUserJSON(1004, "dave")
	const p = "/api/v1/repos/Acme/Widgets"
	f := httpfake.New(t)
	f.Expect("GET", p, httpfake.JSON(200, rwRepo))
	f.Expect("GET", p+"/pulls/12", httpfake.JSON(200, `{"id":9012,"url":"","number":12,"user":`+alice+`,"title":"Add caching","body":"Body.\r\n","labels":[{"id":5,"name":"kind/feature","exclusive":false,"is_archived":false,"color":"00aabb","description":"","url":""}],"milestone":null,"assignee":null,"assignees":null,"requested_reviewers":null,"requested_reviewers_teams":null,"state":"closed","draft":false,"is_locked":false,"comments":2,"review_comments":3,"additions":10,"deletions":2,"changed_files":1,"html_url":"","diff_url":"","patch_url":"","mergeable":false,"merged":true,"merged_at":"2024-03-02T09:00:00+02:00","merge_commit_sha":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","merged_by":`+alice+`,"allow_maintainer_edit":false,"base":{"label":"main","ref":"main","sha":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","repo_id":77,"repo":null},"head":{"label":"feature","ref":"feature","sha":"`+rwHead+`","repo_id":77,"repo":null},"merge_base":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","due_date":null,"created_at":"2024-03-01T10:00:00+02:00","updated_at":"2024-03-02T09:00:00+02:00","closed_at":"2024-03-02T09:00:00+02:00","pin_order":0,"flow":0}`))
	f.Expect("GET", p+"/issues/12/comments?limit=50&page=1", withHeader(httpfake.JSON(200, `[{"id":4001,"html_url":"","pull_request_url":"","issue_url":"","user":`+bob+`,"original_author":"","original_author_id":0,"body":"first","assets":[],"created_at":"2024-03-01T11:00:00+02:00","updated_at":"2024-03-01T11:00:00+02:00"},{"id":4002,"html_url":"","pull_request_url":"","issue_url":"","user":{"id":-1,"login":"Ghost","username":"Ghost"},"original_author":"","original_author_id":0,"body":"from a deleted account","assets":[],"created_at":"2024-03-01T11:30:00+02:00","updated_at":"2024-03-01T11:30:00+02:00"}]`), "X-Total-Count", "2"))
	f.Expect("GET", p+"/pulls/12/reviews?limit=50&page=1", withHeader(httpfake.JSON(200, "["+strings.Join([]string{
		rwReview(201, bob, "APPROVED", true, true, true, "2024-03-01T12:00:00+02:00"),
		`{"id":202,"user":null,"team":{"id":3,"name":"reviewers","description":"","organization":null,"includes_all_repositories":false,"permission":"write","units":["repo.code"],"units_map":{"repo.code":"write"},"can_create_org_repo":false},"state":"REQUEST_REVIEW","body":"","commit_id":"","stale":false,"official":false,"dismissed":false,"comments_count":0,"submitted_at":"2024-03-01T12:05:00+02:00","updated_at":"2024-03-01T12:05:00+02:00","html_url":"","pull_request_url":""}`,
		rwReview(203, dave, "PENDING", false, false, false, "2024-03-01T12:10:00+02:00"),
		rwReview(204, dave, "REQUEST_CHANGES", false, false, true, "2024-03-01T12:20:00+02:00"),
		rwReview(205, carol, "COMMENT", false, false, false, "2024-03-01T12:30:00+02:00"),
	}, ",")+"]"), "X-Total-Count", "5"))
	f.Expect("GET", p+"/pulls/12/reviews/201/comments", httpfake.JSON(200, rwReviewComment(3001, 201, bob, alice, 10, 0, "2024-03-01T12:00:00+02:00")))
	f.Expect("GET", p+"/pulls/12/reviews/204/comments", httpfake.JSON(200, rwReviewComment(3002, 204, dave, "null", 0, 7, "2024-03-01T12:20:00+02:00")))
	f.Expect("GET", p+"/pulls/12/reviews/205/comments", httpfake.JSON(200, rwReviewComment(3003, 205, carol, "null", 10, 0, "2024-03-01T12:30:00+02:00")))
	other := strings.Repeat("e", 40)
	f.Expect("GET", p+"/actions/tasks?limit=50&page=1", httpfake.JSON(200, `{"workflow_runs":[`+strings.Join([]string{
		rwTask(505, "running", other, "2024-03-01T10:05:00+02:00", "2024-03-01T10:05:01+02:00", "2024-03-01T10:05:01+02:00"),
		rwTask(504, "unknown", rwHead, "2024-03-01T10:04:00+02:00", "2024-03-01T10:04:01+02:00", "2024-03-01T10:04:01+02:00"),
		rwTask(503, "cancelled", rwHead, "2024-03-01T10:03:00+02:00", "1970-01-01T01:00:00+01:00", "2024-03-01T10:03:30+02:00"),
		rwTask(502, "failure", rwHead, "2024-03-01T10:02:00+02:00", "2024-03-01T10:02:01+02:00", "2024-03-01T10:09:00+02:00"),
		rwTask(501, "success", rwHead, "2024-03-01T10:01:00+02:00", "2024-03-01T10:01:01+02:00", "2024-03-01T10:08:00+02:00"),
	}, ",")+`],"total_count":5}`))
	// The workflow has a name: ("CI"), so its jobs' statuses carry it, not the file name; every
	// head task (the unknown one too, already a gap) accounts for its job's status.
	var sts []string
	for _, st := range []string{"unknown", "cancelled", "failure", "success"} {
		sts = append(sts, `{"id":`+itoa(len(sts)+71)+`,"status":"pending","target_url":"","description":"","url":"","context":"CI / test (`+st+`) (pull_request)","creator":null,"created_at":"2024-03-01T10:00:00+02:00","updated_at":"2024-03-01T10:00:00+02:00"}`)
	}
	f.Expect("GET", p+"/commits/"+rwHead+"/status?limit=50&page=1", withHeader(httpfake.JSON(200,
		`{"state":"pending","sha":"`+rwHead+`","total_count":4,"statuses":[`+strings.Join(sts, ",")+`]}`), "X-Total-Count", "4"))
	f.Expect("GET", p+"/collaborators/alice/permission", httpfake.JSON(200, `{"permission":"owner","role_name":"owner","user":`+alice+`}`))
	f.Expect("GET", p+"/collaborators/bob/permission", httpfake.JSON(200, `{"permission":"write","role_name":"write","user":`+bob+`}`))
	f.Expect("GET", p+"/collaborators/carol/permission", httpfake.JSON(200, `{"permission":"none","role_name":"none","user":`+carol+`}`))
	f.Expect("GET", p+"/collaborators/dave/permission", httpfake.JSON(403, `{"message":"Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own","url":"https://example.com:3443/forgejo/api/swagger"}`))

	target, _ := url.Parse(f.URL)
	rt := &subPathTransport{target: target, prefix: "/forgejo"}
	var logs bytes.Buffer
	cl, err := New(Options{APIURL: "https://Example.com:3443/forgejo/api/v1", Token: "secret-token", Transport: rt, Log: zerolog.New(zerolog.SyncWriter(&logs))})
	if err != nil {
		t.Fatal(err)
	}
	prof := acquisition.Profile{EntityKind: acquisition.KindChangeProposal, IncludedSources: []string{"agent_runs", "check_logs", "checks", "comments", "entity", "reviews"},
		RecordSelection: "newest", CheckLogSelection: "failed",
		Bounds: acquisition.Bounds{MaxRecordsPerSource: 100, MaxSourceBytes: 4096, MaxRecordBytes: 8192, MaxLogBytes: 4096, MaxMetadataStringBytes: 256, MaxLabels: 20}}
	a, err := cl.Acquire(context.Background(), forge.Ref{Forge: "forgejo", Repo: "Acme/Widgets", Number: 12}, prof)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("sub-path install on a non-default port", func(t *testing.T) {
		for _, s := range rt.seen {
			if !strings.HasPrefix(s, "https://example.com:3443/forgejo/api/v1/") {
				t.Errorf("request to %s", s)
			}
		}
		want := acquisition.Source{Forge: "forgejo", Host: "example.com:3443", RepositoryID: "77", Repository: "acme/widgets"}
		if a.Source != want {
			t.Errorf("source = %+v", a.Source)
		}
	})
	t.Run("merged: true on a closed pull request is merged; head.sha captured", func(t *testing.T) {
		e := a.Entity
		if e.State != "merged" || e.ID != "9012" || e.Number != 12 || e.HeadSHA != rwHead || deref(e.Author.ID) != "1001" || strings.Join(e.Labels, ",") != "kind/feature" {
			t.Errorf("entity = %+v", e)
		}
	})
	t.Run("reviews: dismissed flag wins, team request (user null) and pending omitted, submitted_at with offsets", func(t *testing.T) {
		got := map[string]string{}
		for _, r := range a.Reviews {
			got[r.ID] = r.State + "@" + r.SubmittedAt
		}
		want := map[string]string{"201": "dismissed@2024-03-01T12:00:00+02:00", "204": "changes_requested@2024-03-01T12:20:00+02:00", "205": "commented@2024-03-01T12:30:00+02:00"}
		if len(got) != len(want) {
			t.Errorf("reviews = %v", got)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("review %s = %q, want %q", k, got[k], v)
			}
		}
		if len(a.Outcomes.Reviews) != 0 {
			t.Errorf("review gaps %v (omitted rows are not gaps)", a.Outcomes.Reviews)
		}
	})
	t.Run("threads: same path, side and line across reviews; resolver of the first comment; old side", func(t *testing.T) {
		if len(a.Threads) != 2 {
			t.Fatalf("threads = %+v", a.Threads)
		}
		right, left := a.Threads[0], a.Threads[1]
		if right.ID != "3001" || strings.Join(right.CommentIDs, ",") != "3001,3003" || right.Side != "right" || right.Line != 10 ||
			!right.Resolved || right.ResolvedBy == nil || deref(right.ResolvedBy.ID) != "1001" || right.ReviewID != "201" || right.ReviewedSHA != rwHead || right.Outdated {
			t.Errorf("right thread = %+v", right)
		}
		if left.ID != "3002" || left.Side != "left" || left.Line != 7 || left.Resolved || left.ResolvedBy != nil {
			t.Errorf("left thread = %+v", left)
		}
	})
	t.Run("comments: a deleted account's comment keeps a null author", func(t *testing.T) {
		var ghost *acquisition.Comment
		for i := range a.Comments {
			if a.Comments[i].ID == "4002" {
				ghost = &a.Comments[i]
			}
		}
		if ghost == nil || ghost.Author.ID != nil || ghost.Author.Login != nil {
			t.Errorf("ghost comment = %+v", ghost)
		}
	})
	t.Run("tasks: head only, epoch in a local zone is never-started, unknown is invalid", func(t *testing.T) {
		got := map[string]acquisition.Check{}
		for _, c := range a.Checks {
			got[c.ID] = c
		}
		if len(got) != 3 || gapCount(a.Outcomes.Checks, "invalid_metadata") != 1 {
			t.Errorf("checks %v gaps %v", got, a.Outcomes.Checks)
		}
		if c := got["503"]; c.Status != "completed" || c.Conclusion != "cancelled" || c.NeverStarted == nil || !*c.NeverStarted || c.StartedAt != "" || c.CompletedAt != "2024-03-01T10:03:30+02:00" {
			t.Errorf("cancelled never-started task = %+v", c)
		}
		if c := got["502"]; c.Conclusion != "failure" || c.StartedAt != "2024-03-01T10:02:01+02:00" || c.Log == nil || c.Log.Outcome != acquisition.LogUnsupported {
			t.Errorf("failed task = %+v", c)
		}
		if c := got["501"]; c.Conclusion != "success" || c.Log != nil {
			t.Errorf("successful task = %+v (its log is not selected)", c)
		}
	})
	t.Run("actors: owner → admin, none → none, 403 → unverified with authorization_failed", func(t *testing.T) {
		roles := map[string]string{}
		for _, ac := range a.Actors {
			r := "<nil>"
			if ac.Role != nil {
				r = *ac.Role
			}
			roles[ac.ID] = r
		}
		if roles["1001"] != "admin" || roles["1002"] != "write" || roles["1003"] != "none" || roles["1004"] != "<nil>" || len(roles) != 4 {
			t.Errorf("roles = %v", roles)
		}
		if gapCount(a.Outcomes.Actors, "authorization_failed") != 1 {
			t.Errorf("actor gaps %v", a.Outcomes.Actors)
		}
	})
	t.Run("stats: 13 requests at the lower bound; no token or body in logs", func(t *testing.T) {
		s := cl.Stats()
		if s.Requests != 13 || s.LowerBound != 13 || s.Ratio != 1 {
			t.Errorf("stats = %+v", s)
		}
		for k := range s.RequestsByEndpoint {
			if strings.Contains(k, "alice") || strings.Contains(k, "Acme") || strings.Contains(k, rwHead) {
				t.Errorf("endpoint key %q names an account or repository", k)
			}
		}
		if strings.Contains(logs.String(), "secret-token") || strings.Contains(logs.String(), "Only admins") {
			t.Errorf("logs leak: %s", logs.String())
		}
	})
	t.Run("assembles (offsets normalised to UTC), validates against both bundles and verifies", func(t *testing.T) {
		tree, err := snapshot.Assemble(context.Background(), a, snapshot.Config{Profile: prof, Category: "observation", Filter: filter.New(nil)})
		if err != nil {
			t.Fatalf("Assemble: %v", err)
		}
		if bytes.Contains(tree.Index, []byte("+02:00")) {
			t.Error("a local-zone timestamp reached index.json")
		}
		snapshottest.Check(t, tree)
	})
}

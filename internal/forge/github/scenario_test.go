package github_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/ghscenario"
	"github.com/forgectx/forgectx/test/httpfake"
)

func actorByLogin(a *acquisition.Acquisition, login string) *acquisition.Actor {
	for i := range a.Actors {
		if a.Actors[i].Login != nil && *a.Actors[i].Login == login {
			return &a.Actors[i]
		}
	}
	return nil
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// Work item: identity, state, labels, comments, every actor kind and role outcome. The fake
// fails the test on any request beyond the recorded ones (no review/check reads for issues).
func TestIssueScenario(t *testing.T) {
	s := ghscenario.Issue()
	a, st, err := acquireFake(t, s, build(t, s), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != (acquisition.Source{Forge: "github", Host: "github.com", RepositoryID: "R_kgDOLq3Xzw", Repository: "octo-org/hello-world"}) {
		t.Errorf("source = %+v (repository must be lowercase owner/name)", a.Source)
	}
	e := a.Entity
	if e.Kind != acquisition.KindWorkItem || e.ID != "I_kwDOLq3Xz86Ab1" || e.Number != 7 || e.State != "closed" || e.HeadSHA != "" {
		t.Errorf("entity = %+v", e)
	}
	if strings.Join(e.Labels, ",") != "area/api,bug,needs-triage" {
		t.Errorf("labels = %q, want sorted", e.Labels)
	}
	if str(e.Author.ID) != "U_kgDOAAAD7A" || e.CreatedAt != "2026-09-08T10:00:00Z" {
		t.Errorf("author/created = %s %s", str(e.Author.ID), e.CreatedAt)
	}
	if len(a.Comments) != 5 || len(a.Reviews) != 0 || len(a.Threads) != 0 || len(a.Checks) != 0 {
		t.Fatalf("counts: %d comments %d reviews %d threads %d checks", len(a.Comments), len(a.Reviews), len(a.Threads), len(a.Checks))
	}
	if c := a.Comments[2]; c.Author.ID != nil || c.Author.Login != nil || c.ID != "IC_kwDOLq3Xz86AAAfT" {
		t.Errorf("deleted-account comment: author %s/%s (the ghost placeholder must map to null)", str(c.Author.ID), str(c.Author.Login))
	}
	for _, tc := range []struct {
		login, kind, role string
		verified          bool
	}{
		{"dave", "human", "triage", true},
		{"alice", "human", "admin", true},
		{"frank", "human", "read", true},
		{"mallory", "human", "<nil>", false}, // collaborator API 404
		{"renovate[bot]", "bot", "<nil>", false},
	} {
		ac := actorByLogin(a, tc.login)
		if ac == nil {
			t.Errorf("actor %s missing", tc.login)
			continue
		}
		if ac.Kind != tc.kind || str(ac.Role) != tc.role || ac.RoleVerified != tc.verified {
			t.Errorf("actor %s = kind %s role %s verified %v; want %s %s %v", tc.login, ac.Kind, str(ac.Role), ac.RoleVerified, tc.kind, tc.role, tc.verified)
		}
	}
	if len(a.Actors) != 5 {
		t.Errorf("%d actors, want 5 (ghost is not an actor)", len(a.Actors))
	}
	for i := 1; i < len(a.Actors); i++ {
		if a.Actors[i-1].ID >= a.Actors[i].ID {
			t.Errorf("actors not sorted by ID")
		}
	}
	if a.Outcomes.Comments != nil || a.Outcomes.Actors != nil {
		t.Errorf("unexpected gaps %+v", a.Outcomes)
	}
	if st.Requests != st.LowerBound {
		t.Errorf("requests %d, lower bound %d", st.Requests, st.LowerBound)
	}
}

// Change proposal: review states and dismissals, threads, every check-table row present in
// the scenario, logs (fetched and over max_source_bytes), custom-role actor.
func TestPullRequestScenario(t *testing.T) {
	s := ghscenario.PR()
	a, st, err := acquireFake(t, s, build(t, s), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Entity.Kind != acquisition.KindChangeProposal || a.Entity.State != "open" || a.Entity.HeadSHA != "6dcb09b5b57875f334f61aebed695e2e4193db5e" {
		t.Errorf("entity = %+v", a.Entity)
	}
	// Reviews: PENDING omitted; states mapped; submitted_at is the time; dismissals.
	got := map[string]string{}
	for _, r := range a.Reviews {
		got[r.ID] = r.State + "@" + r.SubmittedAt
	}
	want := map[string]string{
		"PRR_kwDOLq3Xz86AAABQ": "approved@2026-09-08T13:20:00Z",
		"PRR_kwDOLq3Xz86AAABR": "changes_requested@2026-09-08T12:30:00Z",
		"PRR_kwDOLq3Xz86AAABS": "commented@2026-09-08T12:40:00Z",
		"PRR_kwDOLq3Xz86AAABT": "dismissed@2026-09-08T12:20:00Z",
		"PRR_kwDOLq3Xz86AAABU": "dismissed@2026-09-08T12:25:00Z",
	}
	if len(got) != len(want) {
		t.Errorf("reviews = %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("review %s = %q, want %q", k, got[k], v)
		}
	}
	for _, r := range a.Reviews {
		switch r.ID {
		case "PRR_kwDOLq3Xz86AAABT":
			if r.DismissedBy == nil || str(r.DismissedBy.ID) != "U_kgDOAAAD6Q" || str(r.DismissedAt) != "2026-09-08T13:30:00Z" {
				t.Errorf("dismissal from the timeline: by %+v at %s", r.DismissedBy, str(r.DismissedAt))
			}
		case "PRR_kwDOLq3Xz86AAABU":
			if r.DismissedBy == nil || r.DismissedBy.ID != nil || r.DismissedAt != nil {
				t.Errorf("dismissal not in the timeline must be exposed with null actor and time: %+v %v", r.DismissedBy, r.DismissedAt)
			}
		default:
			if r.DismissedBy != nil || r.DismissedAt != nil {
				t.Errorf("review %s carries a dismissal", r.ID)
			}
		}
		if r.ID == "PRR_kwDOLq3Xz86AAABQ" && r.ReviewedSHA != s.HeadSHA {
			t.Errorf("reviewed sha = %q", r.ReviewedSHA)
		}
	}
	// Threads in forge order with reply edges, location and state.
	if len(a.Threads) != 3 {
		t.Fatalf("%d threads", len(a.Threads))
	}
	t1, t2, t3 := a.Threads[0], a.Threads[1], a.Threads[2]
	if t1.ID != "PRRT_kwDOLq3Xz85Aa001" || !t1.Resolved || t1.ResolvedBy == nil || str(t1.ResolvedBy.ID) != "U_kgDOAAAD6Q" || t1.Outdated {
		t.Errorf("thread 1 = %+v", t1)
	}
	if strings.Join(t1.CommentIDs, ",") != "PRRC_kwDOLq3Xz86Bb001,PRRC_kwDOLq3Xz86Bb002,PRRC_kwDOLq3Xz86Bb003" || len(t1.Replies) != 2 ||
		t1.Replies[0] != (acquisition.Reply{ID: "PRRC_kwDOLq3Xz86Bb002", ParentID: "PRRC_kwDOLq3Xz86Bb001"}) {
		t.Errorf("thread 1 comments %v replies %v", t1.CommentIDs, t1.Replies)
	}
	if t1.Path != "uploader/retry.go" || t1.Line != 10 || t1.Side != "right" || t1.ReviewID != "PRR_kwDOLq3Xz86AAABR" || t1.ReviewedSHA != s.HeadSHA || t1.CreatedAt != "2026-09-08T12:31:00Z" {
		t.Errorf("thread 1 location = %+v", t1)
	}
	if !t2.Outdated || t2.Resolved || t2.ResolvedBy != nil || t2.Side != "left" || t2.Line != 0 || t2.OriginalLine != 44 || t2.OriginalStartLine != 40 {
		t.Errorf("thread 2 = %+v", t2)
	}
	if t3.StartLine != 1 || t3.Line != 3 || len(t3.CommentIDs) != 2 {
		t.Errorf("thread 3 = %+v", t3)
	}
	if len(a.Comments) != 2+6 {
		t.Errorf("%d comments, want 2 conversation + 6 thread comments", len(a.Comments))
	}
	// Checks: one row per status/conclusion case in the scenario.
	type row struct{ status, conclusion, started, completed, never, log string }
	never := func(p *bool) string {
		if p == nil {
			return "-"
		}
		if *p {
			return "true"
		}
		return "false"
	}
	rows := map[string]row{}
	for _, c := range a.Checks {
		lg := "-"
		if c.Log != nil {
			lg = c.Log.Outcome
		}
		rows[c.Name] = row{c.Status, c.Conclusion, c.StartedAt, c.CompletedAt, never(c.NeverStarted), lg}
		if c.HeadSHA != s.HeadSHA || c.CreatedAt == "" {
			t.Errorf("check %s: head %s created %s", c.Name, c.HeadSHA, c.CreatedAt)
		}
	}
	wantRows := map[string]row{
		"build":       {"completed", "success", "2026-09-08T15:01:00Z", "2026-09-08T15:05:00Z", "false", "-"},
		"test":        {"completed", "failure", "2026-09-08T15:02:00Z", "2026-09-08T15:10:00Z", "false", "fetched"},
		"lint":        {"completed", "failure", "", "2026-09-08T15:00:00Z", "true", "fetched"}, // startup_failure
		"docs":        {"completed", "skipped", "", "2026-09-08T15:00:00Z", "true", "-"},
		"deploy":      {"completed", "cancelled", "2026-09-08T15:03:00Z", "2026-09-08T15:04:00Z", "false", "-"},
		"e2e":         {"queued", "", "", "", "-", "-"}, // waiting
		"integration": {"in_progress", "", "2026-09-08T15:06:00Z", "", "-", "-"},
		"soak":        {"completed", "timed_out", "2026-09-08T15:01:00Z", "2026-09-08T16:00:00Z", "false", "source_too_large"},
	}
	if len(rows) != len(wantRows) {
		t.Errorf("checks = %v", rows)
	}
	for name, w := range wantRows {
		if rows[name] != w {
			t.Errorf("check %s = %+v, want %+v", name, rows[name], w)
		}
	}
	for _, c := range a.Checks {
		if c.Name == "test" && !strings.Contains(string(c.Log.Content), "--- FAIL: TestUpload") {
			t.Errorf("log content = %q", c.Log.Content)
		}
		if c.Name == "soak" && len(c.Log.Content) != 0 {
			t.Errorf("an over-bound log kept %d bytes", len(c.Log.Content))
		}
	}
	// external-ci (no immutable creation time), mystery (unknown conclusion), stale-rev
	// (other revision) are invalid_metadata.
	if len(a.Outcomes.Checks) != 1 || a.Outcomes.Checks[0] != (acquisition.Gap{Code: "invalid_metadata", Count: 3}) {
		t.Errorf("checks gaps = %+v", a.Outcomes.Checks)
	}
	if ac := actorByLogin(a, "erin"); ac == nil || str(ac.Role) != "write" || !ac.RoleVerified {
		t.Errorf("custom role actor = %+v", ac)
	}
	if ac := actorByLogin(a, "github-actions[bot]"); ac == nil || ac.Kind != "bot" || ac.Role != nil {
		t.Errorf("bot = %+v", ac)
	}
	if st.Requests != st.LowerBound {
		t.Errorf("requests %d, lower bound %d: %v", st.Requests, st.LowerBound, st.RequestsByEndpoint)
	}
}

func TestMergedBotPullRequestScenario(t *testing.T) {
	s := ghscenario.MergedBots()
	a, _, err := acquireFake(t, s, build(t, s), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Entity.State != "merged" || str(a.Entity.Author.ID) != "BOT_kgDOAb4Bng" {
		t.Errorf("entity = %+v", a.Entity)
	}
	if ac := actorByLogin(a, "renovate"); ac == nil || ac.Kind != "bot" || ac.RoleVerified {
		t.Errorf("bot author (GraphQL login without [bot]) = %+v", ac)
	}
	if len(a.Reviews) != 0 || len(a.Threads) != 0 || len(a.Checks) != 0 {
		t.Errorf("empty lists were not empty")
	}
	if a.Outcomes.Reviews != nil || a.Outcomes.Checks != nil || a.Outcomes.Comments != nil {
		t.Errorf("empty lists produced gaps: %+v", a.Outcomes)
	}
}

// Pagination: two exactly full pages (no rel="next" on the last) and a list ending with an
// announced empty page are both read completely, with no gap.
func TestPaginationEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		mk        func() *ghscenario.Scenario
		comments  int
		pages     int
		overBound int
	}{
		// Each two-page listing costs one drift-check request (Exists) over the lower bound.
		{ghscenario.PaginationExact, 200, 2, 1},
		{ghscenario.PaginationEmptyPage, 100, 2, 2},
	} {
		s := tc.mk()
		a, st, err := acquireFake(t, s, build(t, s), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Comments) != tc.comments || st.Pages["comments"] != tc.pages || a.Outcomes.Comments != nil {
			t.Errorf("#%d: %d comments in %d pages, gaps %+v", s.Number, len(a.Comments), st.Pages["comments"], a.Outcomes.Comments)
		}
		if st.Requests-st.LowerBound != tc.overBound {
			t.Errorf("#%d: requests %d vs lower bound %d", s.Number, st.Requests, st.LowerBound)
		}
		if len(a.Entity.Labels) != 0 || a.Entity.Labels == nil {
			t.Errorf("labels = %#v, want an empty list", a.Entity.Labels)
		}
	}
}

// A record outside the github_node_id mapping is omitted as invalid_metadata, not rewritten,
// and its author (referenced by nothing else) gets no actor row and no permission lookup.
func TestRecordWithInvalidNodeIDIsOmitted(t *testing.T) {
	s := ghscenario.Issue()
	s.Comments[3].NodeID = "IC/../etc" // mallory's only comment
	c := build(t, s)
	i := find(t, c, "/collaborators/mallory/permission")
	a, _, err := acquireFake(t, s, without(c, i), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comments) != 4 || len(a.Outcomes.Comments) != 1 || a.Outcomes.Comments[0] != (acquisition.Gap{Code: "invalid_metadata", Count: 1}) {
		t.Errorf("%d comments, gaps %+v", len(a.Comments), a.Outcomes.Comments)
	}
	if actorByLogin(a, "mallory") != nil {
		t.Error("the omitted record's author is still an actor")
	}
}

// GitHub Enterprise Server: REST under /api/v3, GraphQL at /api/graphql, source.host is the
// server's host (with its port when not 443).
func TestEnterpriseServerPaths(t *testing.T) {
	s := ghscenario.PR()
	c := build(t, s)
	ghes := &cassette.Cassette{Meta: c.Meta}
	for _, in := range c.Interactions {
		u, _ := url.Parse(in.Request.URL)
		switch {
		case u.Path == "/graphql":
			u.Path = "/api/graphql"
		case strings.HasPrefix(u.Path, "/repos/"):
			u.Path = "/api/v3" + u.Path
		}
		in.Request.URL = u.String()
		ghes.Interactions = append(ghes.Interactions, in)
	}
	fake := httpfake.New(t)
	fake.ExpectCassette(ghes)
	opts := fastOptions(fake.URL + "/api/v3")
	opts.SourceHost = ""
	cl, err := github.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cl.Acquire(context.Background(), refOf(s), testProfile(kindOf(s)))
	if err != nil {
		t.Fatal(err)
	}
	wantHost := strings.TrimPrefix(fake.URL, "http://")
	if a.Source.Host != wantHost {
		t.Errorf("source.host = %q, want %q", a.Source.Host, wantHost)
	}
	base, _, err := acquireFake(t, s, c, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Source.Host = base.Source.Host
	if string(acqBytes(t, a)) != string(acqBytes(t, base)) {
		t.Error("GHES acquisition differs from the github.com one beyond source.host")
	}
}

// A change-proposal profile with comments but not reviews still collects the review-thread
// comments (comment records), but no reviews, threads, checks, or the actors only they
// reference.
func TestCommentsWithoutReviewsStillReadThreadComments(t *testing.T) {
	s := ghscenario.PR()
	c := build(t, s)
	keep := &cassette.Cassette{Meta: c.Meta}
	for _, in := range c.Interactions {
		u, _ := url.Parse(in.Request.URL)
		b, _ := in.Request.Body.Bytes()
		switch {
		case strings.Contains(string(b), `"operationName":"Entity"`), strings.Contains(string(b), `"operationName":"Threads"`),
			strings.HasSuffix(u.Path, "/issues/42/comments"):
		case strings.Contains(u.Path, "/collaborators/"):
			login := strings.Split(u.Path, "/")[5]
			if login == "alice" || login == "dave" || login == "frank" {
				continue // referenced only by reviews, dismissals and thread resolution
			}
		default:
			continue
		}
		keep.Interactions = append(keep.Interactions, in)
	}
	fake := httpfake.New(t)
	fake.ExpectCassette(keep)
	cl, err := github.New(fastOptions(fake.URL))
	if err != nil {
		t.Fatal(err)
	}
	p := testProfile(acquisition.KindChangeProposal)
	p.IncludedSources = []string{"comments", "entity"}
	p.CheckLogSelection = "none"
	a, err := cl.Acquire(context.Background(), refOf(s), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comments) != 8 || len(a.Threads) != 0 || len(a.Reviews) != 0 || len(a.Checks) != 0 {
		t.Errorf("comments %d threads %d reviews %d checks %d", len(a.Comments), len(a.Threads), len(a.Reviews), len(a.Checks))
	}
}

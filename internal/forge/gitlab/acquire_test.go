package gitlab

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

func commentByID(a *acquisition.Acquisition, id string) *acquisition.Comment {
	for i := range a.Comments {
		if a.Comments[i].ID == id {
			return &a.Comments[i]
		}
	}
	return nil
}

func threadByID(a *acquisition.Acquisition, id string) *acquisition.Thread {
	for i := range a.Threads {
		if a.Threads[i].ID == id {
			return &a.Threads[i]
		}
	}
	return nil
}

func checkByID(a *acquisition.Acquisition, id string) *acquisition.Check {
	for i := range a.Checks {
		if a.Checks[i].ID == id {
			return &a.Checks[i]
		}
	}
	return nil
}

func actorByID(a *acquisition.Acquisition, id string) *acquisition.Actor {
	for i := range a.Actors {
		if a.Actors[i].ID == id {
			return &a.Actors[i]
		}
	}
	return nil
}

func gapCount(gaps []acquisition.Gap, code string) int {
	for _, g := range gaps {
		if g.Code == code {
			return g.Count
		}
	}
	return 0
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestGitLabMergeRequestMappings proves each GitLab mapping row of the spec on the recorded
// merge-request scenario, one subtest per rule.
func TestGitLabMergeRequestMappings(t *testing.T) {
	f := httpfake.New(t)
	expectMRScenario(t, f)
	a := acquireMR(t, testClient(t, f))

	t.Run("source uses the global project id and path_with_namespace", func(t *testing.T) {
		if a.Source.Forge != "gitlab" || a.Source.RepositoryID != "42" || a.Source.Repository != "Acme/Platform/widgets" {
			t.Errorf("source = %+v", a.Source)
		}
	})
	t.Run("entity id is the global id and number the iid", func(t *testing.T) {
		e := a.Entity
		if e.Kind != "change_proposal" || e.ID != "9007" || e.Number != 7 {
			t.Errorf("entity kind/id/number = %s/%s/%d", e.Kind, e.ID, e.Number)
		}
		if e.Title != "Add widget caching" || e.State != "open" || str(e.Author.ID) != "101" || str(e.Author.Login) != "alice" {
			t.Errorf("entity = %+v", e)
		}
		if strings.Join(e.Labels, ",") != "performance,backend,needs review" {
			t.Errorf("labels = %q", e.Labels)
		}
		if !strings.HasPrefix(e.Body, "## What does this MR do?") || e.CreatedAt != "2026-11-20T10:00:00.123Z" || e.UpdatedAt != "2026-11-29T17:45:12.5Z" {
			t.Errorf("body/times = %q %s %s", e.Body[:10], e.CreatedAt, e.UpdatedAt)
		}
	})
	t.Run("head sha captured from the merge request", func(t *testing.T) {
		if a.Entity.HeadSHA != headSHA {
			t.Errorf("head = %q", a.Entity.HeadSHA)
		}
	})
	t.Run("note ids are record ids in forge order and system notes are excluded", func(t *testing.T) {
		var ids []string
		for _, c := range a.Comments {
			ids = append(ids, c.ID)
		}
		if got := strings.Join(ids, ","); got != "5001,5003,5004,5005,5006,5007,5008,5010,5011" {
			t.Errorf("comment ids = %s (5002 and 5009 are system notes)", got)
		}
		if c := commentByID(a, "5006"); c == nil || str(c.Author.ID) != "104" || c.CreatedAt != "2026-11-22T15:00:00Z" {
			t.Errorf("comment 5006 = %+v", c)
		}
	})
	t.Run("individual notes are comments without a thread", func(t *testing.T) {
		if threadByID(a, "6a9c1750b37d513a43987b574953fceb50b03ce7") != nil {
			t.Error("individual note became a thread")
		}
		if len(a.Threads) != 3 {
			t.Errorf("threads = %d, want 3", len(a.Threads))
		}
	})
	t.Run("resolved DiffNote thread: new_line maps to right with range start and resolver", func(t *testing.T) {
		th := threadByID(a, "9f2e1a0b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f")
		if th == nil {
			t.Fatal("thread missing")
		}
		if strings.Join(th.CommentIDs, ",") != "5003,5004" || len(th.Replies) != 1 || th.Replies[0] != (acquisition.Reply{ID: "5004", ParentID: "5003"}) {
			t.Errorf("thread records = %v %v", th.CommentIDs, th.Replies)
		}
		if th.Path != "src/cache.go" || th.Line != 12 || th.Side != "right" || th.StartLine != 10 || th.ReviewedSHA != headSHA {
			t.Errorf("location = %s:%d %s start %d sha %s", th.Path, th.Line, th.Side, th.StartLine, th.ReviewedSHA)
		}
		if !th.Resolved || th.ResolvedBy == nil || str(th.ResolvedBy.ID) != "105" || th.Outdated {
			t.Errorf("resolution = %v %+v outdated %v", th.Resolved, th.ResolvedBy, th.Outdated)
		}
		if th.CreatedAt != "2026-11-21T09:00:00Z" {
			t.Errorf("created = %s", th.CreatedAt)
		}
	})
	t.Run("unresolved DiffNote thread: old_line only maps to left, system note inside dropped", func(t *testing.T) {
		th := threadByID(a, "0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d")
		if th == nil {
			t.Fatal("thread missing")
		}
		if strings.Join(th.CommentIDs, ",") != "5005,5006" || th.Path != "src/legacy.go" || th.Line != 7 || th.Side != "left" || th.StartLine != 0 {
			t.Errorf("thread = %+v", th)
		}
		if th.Resolved || th.ResolvedBy != nil || th.Outdated {
			t.Errorf("resolution = %v %+v %v", th.Resolved, th.ResolvedBy, th.Outdated)
		}
	})
	t.Run("non-diff discussion is a thread without location", func(t *testing.T) {
		th := threadByID(a, "b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0")
		if th == nil || th.Path != "" || th.Line != 0 || th.Side != "" || th.Resolved {
			t.Errorf("thread = %+v", th)
		}
	})
	t.Run("reviews selected: partial history_unavailable and no review records", func(t *testing.T) {
		if len(a.Reviews) != 0 || gapCount(a.Outcomes.Reviews, "history_unavailable") != 1 || len(a.Outcomes.Reviews) != 1 {
			t.Errorf("reviews %d, outcomes %+v", len(a.Reviews), a.Outcomes.Reviews)
		}
	})
	t.Run("job status table", func(t *testing.T) {
		tr, fa := true, false
		for _, w := range []struct {
			id, status, conclusion, started, completed string
			never                                      *bool
		}{
			{"9001", "completed", "success", "2026-11-29T17:01:00Z", "2026-11-29T17:02:00Z", &fa},
			{"9002", "completed", "failure", "2026-11-29T17:01:00Z", "2026-11-29T17:02:00Z", &fa}, // retried attempt
			{"9003", "completed", "success", "2026-11-29T17:04:00Z", "2026-11-29T17:07:00Z", &fa}, // the retry
			{"9004", "queued", "", "", "", nil},                                                   // manual
			{"9005", "completed", "skipped", "", "2026-11-29T17:00:00Z", &tr},                     // null started_at, null finished_at → created_at
			{"9006", "completed", "cancelled", "", "2026-11-29T17:04:00Z", &tr},                   // null started_at → never started
			{"9009", "completed", "failure", "2026-11-29T17:02:00Z", "2026-11-29T17:08:00Z", &fa},
			{"9010", "in_progress", "", "2026-11-29T17:06:00Z", "", nil},
			{"9011", "completed", "cancelled", "2026-11-29T17:05:00Z", "2026-11-29T17:09:00Z", &fa}, // started, then canceled
			{"9021", "queued", "", "", "", nil},                                                     // pending, child pipeline
		} {
			c := checkByID(a, w.id)
			if c == nil {
				t.Errorf("check %s missing", w.id)
				continue
			}
			if c.Status != w.status || c.Conclusion != w.conclusion || c.StartedAt != w.started || c.CompletedAt != w.completed || c.HeadSHA != headSHA {
				t.Errorf("check %s = %+v", w.id, c)
			}
			if (c.NeverStarted == nil) != (w.never == nil) || (c.NeverStarted != nil && *c.NeverStarted != *w.never) {
				t.Errorf("check %s never_started = %v, want %v", w.id, c.NeverStarted, w.never)
			}
		}
	})
	t.Run("invalid jobs are omitted as invalid_metadata", func(t *testing.T) {
		// 9007 failed without started_at, 9008 unknown status, 9022 another revision.
		for _, id := range []string{"9007", "9008", "9022"} {
			if checkByID(a, id) != nil {
				t.Errorf("check %s emitted", id)
			}
		}
		if got := gapCount(a.Outcomes.Checks, "invalid_metadata"); got != 3 || len(a.Checks) != 10 {
			t.Errorf("invalid_metadata = %d, checks = %d", got, len(a.Checks))
		}
	})
	t.Run("logs of failed checks: fetched within max_source_bytes, source_too_large past it", func(t *testing.T) {
		if l := checkByID(a, "9002").Log; l == nil || l.Outcome != "fetched" || !bytes.Equal(l.Content, fixture(t, "mr/trace_9002.txt")) {
			t.Errorf("9002 log = %+v", l)
		}
		if l := checkByID(a, "9009").Log; l == nil || l.Outcome != "source_too_large" || len(l.Content) != 0 {
			t.Errorf("9009 log = %+v", l)
		}
		if l := checkByID(a, "9001").Log; l != nil {
			t.Errorf("log of a successful check fetched under check_log_selection failed")
		}
	})
	t.Run("actor roles from members/all and bot from the users API", func(t *testing.T) {
		for _, w := range []struct{ id, kind, role string }{
			{"101", "human", "write"},    // Developer 30
			{"102", "human", "maintain"}, // Maintainer 40, inherited from the group
			{"103", "human", "<nil>"},    // not a member: 404
			{"104", "bot", "<nil>"},      // bot: true
			{"105", "human", "admin"},    // Owner 50
			{"106", "human", "triage"},   // Reporter 20
		} {
			ac := actorByID(a, w.id)
			if ac == nil {
				t.Errorf("actor %s missing", w.id)
				continue
			}
			if ac.Kind != w.kind || str(ac.Role) != w.role || ac.RoleVerified != (w.role != "<nil>") {
				t.Errorf("actor %s = %s %s verified %v", w.id, ac.Kind, str(ac.Role), ac.RoleVerified)
			}
		}
		if len(a.Actors) != 6 || len(a.Outcomes.Actors) != 0 {
			t.Errorf("actors %d, gaps %+v", len(a.Actors), a.Outcomes.Actors)
		}
	})
	t.Run("receipts are read back from notes; malformed ones are invalid_metadata", func(t *testing.T) {
		if len(a.AgentRuns) != 1 || gapCount(a.Outcomes.AgentRuns, "invalid_metadata") != 1 || len(a.Outcomes.AgentRuns) != 1 {
			t.Fatalf("agent runs %+v outcome %+v", a.AgentRuns, a.Outcomes.AgentRuns)
		}
		r := a.AgentRuns[0]
		if r.ID != "5010" || str(r.Author.ID) != "104" || r.Agent != "triage" || r.Status != "success" ||
			r.InputRevision != strings.Repeat("a", 64) || r.InputHeadSHA != headSHA || r.CompletedAt != "2026-11-24T08:00:05.000000000Z" {
			t.Errorf("run %+v", r)
		}
	})
	t.Run("no comment gaps", func(t *testing.T) {
		if len(a.Outcomes.Comments) != 0 {
			t.Errorf("comments outcome %+v", a.Outcomes.Comments)
		}
	})
}

func TestGitLabIssueMappings(t *testing.T) {
	f := httpfake.New(t)
	expectIssueScenario(t, f)
	a, err := testClient(t, f).Acquire(context.Background(), forge.Ref{Repo: "42", Number: 3}, profileIssue())
	if err != nil {
		t.Fatal(err)
	}
	e := a.Entity
	if e.Kind != "work_item" || e.ID != "8003" || e.Number != 3 || e.State != "open" || str(e.Author.ID) != "106" || e.HeadSHA != "" {
		t.Errorf("entity = %+v", e)
	}
	if len(a.Comments) != 3 || a.Comments[0].ID != "6001" || len(a.Threads) != 1 || strings.Join(a.Threads[0].CommentIDs, ",") != "6003,6004" {
		t.Errorf("comments %+v threads %+v", a.Comments, a.Threads)
	}
	if len(a.Checks) != 0 || len(a.Outcomes.Reviews) != 0 || len(a.Outcomes.Checks) != 0 || len(a.Outcomes.AgentRuns) != 0 {
		t.Errorf("work item acquired change-proposal sources: %+v", a.Outcomes)
	}
}

// TestGitLabAcquisitionIsDeterministic: identical responses give identical bytes whatever the
// concurrency and the order in which parallel lookups finish.
func TestGitLabAcquisitionIsDeterministic(t *testing.T) {
	var outs [][]byte
	for _, n := range []int{1, 8} {
		f := httpfake.New(t)
		expectMRScenario(t, f)
		a := acquireMR(t, testClient(t, f, func(o *Options) { o.Concurrency = n }))
		a.Source.Host = "normalised"
		outs = append(outs, encode(t, a))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("acquisitions differ between concurrency 1 and 8")
	}
}

// TestGitLabReplayGolden records the scenario into a cassette (with -update) and replays it
// offline against a fixed self-managed host with a port; the replayed acquisition is golden.
func TestGitLabReplayGolden(t *testing.T) {
	dir := filepath.Join(fixtureDir(t), "cassettes", "mr")
	if *update {
		f := httpfake.New(t)
		expectMRScenario(t, f)
		if err := removeAll(dir); err != nil {
			t.Fatal(err)
		}
		rec, err := cassette.NewRecorder(dir, redirectTo(f.URL), cassette.RecorderOptions{
			Meta:    cassette.Meta{Forge: "gitlab", APIURL: "https://gitlab.example.com:8443/api/v4"},
			Secrets: []string{testToken},
		})
		if err != nil {
			t.Fatal(err)
		}
		rec2 := rec
		acquireMR(t, testClient(t, f, func(o *Options) {
			// Record as if talking to the self-managed host, so the cassette names it.
			o.APIURL = "https://gitlab.example.com:8443/api/v4"
			o.HTTPClient = &http.Client{Transport: rec2}
			o.Concurrency = 1
		}))
	}
	c, err := cassette.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := cassette.NewReplayer(c)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := New(Options{APIURL: "https://gitlab.example.com:8443/api/v4", HTTPClient: &http.Client{Transport: rp}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	a := acquireMR(t, cl)
	if a.Source.Host != "gitlab.example.com:8443" {
		t.Errorf("host = %q", a.Source.Host)
	}
	if u := rp.Unused(); len(u) != 0 {
		t.Errorf("recorded but not replayed: %v", u)
	}
	golden(t, "golden/mr.acquisition.json", encode(t, a))
	// The cassette holds no credential.
	for _, in := range c.Interactions {
		if strings.Contains(in.Request.URL, testToken) || in.Request.Header.Get(headerPrivateToken) != "" {
			t.Errorf("credential recorded in %s", in.Request.URL)
		}
	}
}

func TestGitLabEntityStateAndIDRules(t *testing.T) {
	base := string(fixture(t, "mr/merge_request.json"))
	for _, tc := range []struct {
		name, from, to string
		wantState      string
		wantCode       string
	}{
		{"locked maps to open", `"state": "opened"`, `"state": "locked"`, "open", ""},
		{"merged maps to merged", `"state": "opened"`, `"state": "merged"`, "merged", ""},
		{"closed maps to closed", `"state": "opened"`, `"state": "closed"`, "closed", ""},
		{"unknown state aborts as invalid_metadata", `"state": "opened"`, `"state": "draft"`, "", "invalid_metadata"},
		{"missing id aborts as invalid_metadata", `"id": 9007`, `"id": 0`, "", "invalid_metadata"},
		{"missing created_at aborts", `"created_at": "2026-11-20T10:00:00.123Z"`, `"created_at": null`, "", "invalid_metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := httpfake.New(t)
			f.Expect("GET", pProject, httpfake.JSON(200, fixture(t, "common/project.json")))
			f.Expect("GET", pMR, httpfake.JSON(200, strings.Replace(base, tc.from, tc.to, 1)))
			if tc.wantCode == "" {
				expectActors(t, f, 101)
			}
			p := profileMR()
			p.IncludedSources = []string{"entity"}
			a, err := testClient(t, f).Acquire(context.Background(), forge.Ref{Repo: "42", Number: 7}, p)
			if tc.wantCode != "" {
				var ee *EntityError
				if !errors.As(err, &ee) || ee.Code != tc.wantCode {
					t.Fatalf("err = %v, want EntityError %s", err, tc.wantCode)
				}
				return
			}
			if err != nil || a.Entity.State != tc.wantState {
				t.Fatalf("state = %v, err %v", a, err)
			}
		})
	}
}

func TestGitLabEntityFetchFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply httpfake.Reply
		code  string
	}{
		{"404 is authorization_failed", notFound(), "authorization_failed"},
		{"403 is authorization_failed", httpfake.JSON(403, `{"message":"403 Forbidden"}`), "authorization_failed"},
		{"truncated JSON is fetch_failed", httpfake.TruncatedJSON(fixture(t, "mr/merge_request.json")), "fetch_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := httpfake.New(t)
			f.Expect("GET", pProject, httpfake.JSON(200, fixture(t, "common/project.json")))
			f.Expect("GET", pMR, tc.reply)
			_, err := testClient(t, f).Acquire(context.Background(), forge.Ref{Repo: "42", Number: 7}, profileMR())
			var ee *EntityError
			if !errors.As(err, &ee) || ee.Code != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
}

func TestGitLabRejectsBadRefsBeforeFetching(t *testing.T) {
	f := httpfake.New(t) // any request would fail the test
	c := testClient(t, f)
	for _, tc := range []struct {
		ref  forge.Ref
		kind string
		want string
	}{
		{forge.Ref{Repo: "42", Number: 0}, "change_proposal", "number"},
		{forge.Ref{Repo: "", Number: 1}, "change_proposal", "repo"},
		{forge.Ref{Forge: "github", Repo: "42", Number: 1}, "change_proposal", "ref.forge"},
		{forge.Ref{Repo: "42", Number: 1, APIURL: "https://other.example.com/api/v4"}, "change_proposal", "ref.api_url"},
		{forge.Ref{Repo: "42", Number: 1}, "pull_request", "entity_kind"},
		{forge.Ref{Repo: "..", Number: 1}, "change_proposal", "repo"},
		{forge.Ref{Repo: "group/../users", Number: 1}, "change_proposal", "repo"},
		{forge.Ref{Repo: "group/project?private_token=x", Number: 1}, "change_proposal", "repo"},
		{forge.Ref{Repo: "group//project", Number: 1}, "change_proposal", "repo"},
		{forge.Ref{Repo: "/group/project", Number: 1}, "change_proposal", "repo"},
		{forge.Ref{Repo: "group/pro ject", Number: 1}, "change_proposal", "repo"},
		{forge.Ref{Repo: "group%2Fproject", Number: 1}, "change_proposal", "repo"},
		{forge.Ref{Repo: "grüppe/project", Number: 1}, "change_proposal", "repo"},
		{forge.Ref{Repo: "-42", Number: 1}, "change_proposal", "repo"},
		{forge.Ref{Repo: "042", Number: 1}, "change_proposal", "repo"},
	} {
		p := profileMR()
		p.EntityKind = tc.kind
		_, err := c.Acquire(context.Background(), tc.ref, p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want mention of %s", tc.ref, err, tc.want)
		}
	}
}

// TestGitLabStatsCountEveryAttempt: --stats counts retries as requests, groups them by
// templated endpoint and compares them with the distinct requests a retry-free run needs.
func TestGitLabStatsCountEveryAttempt(t *testing.T) {
	f := httpfake.New(t)
	f.Expect("GET", pMR, httpfake.ServerError()) // served before the scenario's reply
	f.Expect("GET", "/api/v4/projects/42/jobs/9002/trace", httpfake.BadGateway())
	expectMRScenario(t, f)
	c := testClient(t, f)
	if c.Stats() != nil {
		t.Fatal("stats before any Acquire")
	}
	acquireMR(t, c)
	s := c.Stats()
	if s.Requests != 23 || s.LowerBound != 21 || s.Ratio < 1.09 || s.Ratio > 1.1 {
		t.Errorf("requests %d lower bound %d ratio %v", s.Requests, s.LowerBound, s.Ratio)
	}
	for ep, n := range map[string]int{
		"GET projects/:project":                           1,
		"GET projects/:id/merge_requests/:id":             2,
		"GET projects/:id/jobs/:id/trace":                 3,
		"GET projects/:id/pipelines/:id/jobs":             3,
		"GET users/:id":                                   6,
		"GET projects/:id/members/all/:id":                5,
		"GET projects/:id/merge_requests/:id/discussions": 2,
	} {
		if s.RequestsByEndpoint[ep] != n {
			t.Errorf("%s: %d, want %d (all: %v)", ep, s.RequestsByEndpoint[ep], n, s.RequestsByEndpoint)
		}
	}
	if s.Records["comments"] != 9 || s.Records["checks"] != 10 || s.Records["check_logs"] != 1 || s.Records["actors"] != 6 {
		t.Errorf("records %v", s.Records)
	}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil || !strings.Contains(b.String(), `"request_ratio"`) {
		t.Errorf("%v %s", err, b.String())
	}
}

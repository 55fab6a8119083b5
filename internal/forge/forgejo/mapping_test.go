package forgejo

import (
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// TestEntityStateTable proves every row of the spec's Forgejo entity-state table:
// open/closed map to themselves and a pull request with merged: true is merged regardless of
// its native closed state; anything else is unmappable.
func TestEntityStateTable(t *testing.T) {
	for _, tc := range []struct {
		native         string
		isPull, merged bool
		want           string
		ok             bool
	}{
		{"open", false, false, "open", true},
		{"closed", false, false, "closed", true},
		{"open", true, false, "open", true},
		{"closed", true, false, "closed", true},
		{"closed", true, true, "merged", true},
		{"open", true, true, "merged", true}, // merged wins whatever the native state says
		{"all", false, false, "", false},
		{"OPEN", false, false, "", false},
		{"", true, false, "", false},
		{"merged", false, true, "", false}, // an issue is never merged
	} {
		got, ok := mapEntityState(tc.native, tc.isPull, tc.merged)
		if got != tc.want || ok != tc.ok {
			t.Errorf("mapEntityState(%q, pull=%v, merged=%v) = %q, %v; want %q, %v", tc.native, tc.isPull, tc.merged, got, ok, tc.want, tc.ok)
		}
	}
}

// TestReviewStateTable proves every row of the spec's Forgejo review-state table plus the
// documented dismissed-flag rule.
func TestReviewStateTable(t *testing.T) {
	for _, tc := range []struct {
		native    string
		dismissed bool
		want      string
		disp      reviewDisposition
	}{
		{"APPROVED", false, "approved", reviewKeep},
		{"REQUEST_CHANGES", false, "changes_requested", reviewKeep},
		{"COMMENT", false, "commented", reviewKeep},
		{"DISMISSED", false, "dismissed", reviewKeep},
		{"DISMISSED", true, "dismissed", reviewKeep},
		{"APPROVED", true, "dismissed", reviewKeep},
		{"REQUEST_CHANGES", true, "dismissed", reviewKeep},
		{"COMMENT", true, "dismissed", reviewKeep},
		{"PENDING", false, "", reviewOmit},
		{"PENDING", true, "", reviewOmit},
		{"REQUEST_REVIEW", false, "", reviewOmit},
		{"approved", false, "", reviewInvalid},
		{"", false, "", reviewInvalid},
		{"CHANGES_REQUESTED", false, "", reviewInvalid}, // GitHub's spelling is not Forgejo's
	} {
		got, disp := mapReviewState(tc.native, tc.dismissed)
		if got != tc.want || disp != tc.disp {
			t.Errorf("mapReviewState(%q, dismissed=%v) = %q, %d; want %q, %d", tc.native, tc.dismissed, got, disp, tc.want, tc.disp)
		}
	}
}

// TestReviewTimestampRule: submitted_at when present, created_at only when there is no
// submitted_at, neither is invalid_metadata; never a runner clock.
func TestReviewTimestampRule(t *testing.T) {
	for _, tc := range []struct {
		name               string
		submitted, created *string
		want               string
		ok                 bool
	}{
		{"submitted wins", strp("2026-01-02T03:04:05Z"), strp("2026-01-01T00:00:00Z"), "2026-01-02T03:04:05Z", true},
		{"created when no submitted_at", nil, strp("2026-01-01T00:00:00Z"), "2026-01-01T00:00:00Z", true},
		{"created when submitted_at null-ish zero", strp("0001-01-01T00:00:00Z"), strp("2026-01-01T00:00:00Z"), "2026-01-01T00:00:00Z", true},
		{"neither", nil, nil, "", false},
		{"malformed submitted", strp("yesterday"), strp("2026-01-01T00:00:00Z"), "", false},
	} {
		got, ok := reviewTime(nativeReview{SubmittedAt: tc.submitted, CreatedAt: tc.created})
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: reviewTime = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestActionsStatusTable proves every row of the spec's Forgejo Actions status table, the
// never-started rule and the timestamp requirements.
func TestActionsStatusTable(t *testing.T) {
	const (
		created = "2026-09-10T08:00:00Z"
		started = "2026-09-10T08:00:10Z"
		updated = "2026-09-10T08:05:00Z"
		epoch   = "1970-01-01T00:00:00Z"
	)
	type want struct {
		status, conclusion  string
		never               string // "", "true", "false"
		startedAt, complete string
		gap                 string
	}
	for _, tc := range []struct {
		status           string
		started, updated *string
		want             want
	}{
		{"pending", nil, strp(created), want{status: "queued"}},
		{"waiting", strp(epoch), strp(created), want{status: "queued"}},
		{"blocked", nil, nil, want{status: "queued"}},
		{"pending", strp(started), strp(updated), want{status: "queued"}}, // forbidden native start dropped
		{"running", strp(started), strp(updated), want{status: "in_progress", startedAt: started}},
		{"running", strp(epoch), strp(updated), want{gap: "invalid_metadata"}},
		{"success", strp(started), strp(updated), want{"completed", "success", "false", started, updated, ""}},
		{"failure", strp(started), strp(updated), want{"completed", "failure", "false", started, updated, ""}},
		{"error", strp(started), strp(updated), want{"completed", "failure", "false", started, updated, ""}},
		{"warning", strp(started), strp(updated), want{"completed", "neutral", "false", started, updated, ""}},
		{"cancelled", strp(started), strp(updated), want{"completed", "cancelled", "false", started, updated, ""}},
		{"canceled", strp(started), strp(updated), want{"completed", "cancelled", "false", started, updated, ""}},
		{"skipped", strp(started), strp(updated), want{"completed", "skipped", "false", started, updated, ""}},
		{"cancelled", nil, strp(updated), want{"completed", "cancelled", "true", "", updated, ""}},
		{"canceled", strp(epoch), strp(updated), want{"completed", "cancelled", "true", "", updated, ""}},
		{"skipped", strp(""), strp(updated), want{"completed", "skipped", "true", "", updated, ""}},
		{"skipped", nil, nil, want{"completed", "skipped", "true", "", created, ""}}, // created_at fallback
		{"failure", nil, strp(updated), want{gap: "invalid_metadata"}},               // ordinary failure without start
		{"error", strp(epoch), strp(updated), want{gap: "invalid_metadata"}},
		{"success", strp(started), nil, want{gap: "invalid_metadata"}}, // no terminal timestamp
		{"unknown", strp(started), strp(updated), want{gap: "invalid_metadata"}},
		{"completed", strp(started), strp(updated), want{gap: "invalid_metadata"}},
		{"SUCCESS", strp(started), strp(updated), want{gap: "invalid_metadata"}},
		{"success", strp("not a time"), strp(updated), want{gap: "invalid_metadata"}},
	} {
		tk := task{ID: 7, Name: "job", HeadSHA: headSHA, Status: tc.status, CreatedAt: strp(created), RunStartedAt: tc.started, UpdatedAt: tc.updated}
		c, gap := mapTask(tk, headSHA)
		never := ""
		if c.NeverStarted != nil {
			never = "false"
			if *c.NeverStarted {
				never = "true"
			}
		}
		got := want{c.Status, c.Conclusion, never, c.StartedAt, c.CompletedAt, gap}
		if got != tc.want {
			t.Errorf("status %q started=%s updated=%s: got %+v, want %+v", tc.status, deref(tc.started), deref(tc.updated), got, tc.want)
		}
		if gap == "" && (c.ID != "7" || c.HeadSHA != headSHA || c.CreatedAt != created || c.Name != "job") {
			t.Errorf("status %q: identity fields %+v", tc.status, c)
		}
	}
	if _, gap := mapTask(task{ID: 0, Status: "success"}, headSHA); gap != acquisition.GapInvalidMetadata {
		t.Error("task without an id mapped")
	}
	if _, gap := mapTask(task{ID: 1, Status: "pending"}, headSHA); gap != acquisition.GapInvalidMetadata {
		t.Error("task without created_at mapped")
	}
}

// TestMappedChecksSatisfyCheckSchemaRules: whatever a task holds, a mapped check obeys
// check.schema.json's status-specific rules (queued: nothing; in_progress: started only;
// completed: completed_at, conclusion, never_started, started_at iff never_started false, and
// never_started true only for failure/skipped/cancelled).
func TestMappedChecksSatisfyCheckSchemaRules(t *testing.T) {
	times := []*string{nil, strp(""), strp("1970-01-01T00:00:00Z"), strp("2026-09-10T08:00:10Z"), strp("bad")}
	for status := range forgejoCheckStatus {
		for _, s := range times {
			for _, u := range times {
				c, gap := mapTask(task{ID: 1, Name: "n", Status: status, CreatedAt: strp("2026-09-10T08:00:00Z"), RunStartedAt: s, UpdatedAt: u}, headSHA)
				if gap != "" {
					continue
				}
				if err := checkRules(c); err != "" {
					t.Errorf("status %s started=%s updated=%s: %s: %+v", status, deref(s), deref(u), err, c)
				}
			}
		}
	}
}

func checkRules(c acquisition.Check) string {
	switch c.Status {
	case "queued":
		if c.StartedAt != "" || c.CompletedAt != "" || c.Conclusion != "" || c.NeverStarted != nil {
			return "queued check with start/completion/conclusion"
		}
	case "in_progress":
		if c.StartedAt == "" || c.CompletedAt != "" || c.Conclusion != "" || c.NeverStarted != nil {
			return "in_progress check breaks its rule"
		}
	case "completed":
		if c.CompletedAt == "" || c.Conclusion == "" || c.NeverStarted == nil {
			return "completed check without completed_at/conclusion/never_started"
		}
		if *c.NeverStarted {
			if c.StartedAt != "" {
				return "never_started with started_at"
			}
			switch c.Conclusion {
			case "failure", "skipped", "cancelled":
			default:
				return "never_started with conclusion " + c.Conclusion
			}
		} else if c.StartedAt == "" {
			return "never_started false without started_at"
		}
	default:
		return "unknown status"
	}
	return ""
}

// TestPermissionRoleTable: owner and admin → admin, write → write, read → read, none → none;
// anything else is unmappable.
func TestPermissionRoleTable(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"owner", "admin"}, {"admin", "admin"}, {"write", "write"}, {"read", "read"}, {"none", "none"},
		{"maintain", ""}, {"triage", ""}, {"Admin", ""}, {"", ""},
	} {
		got, ok := permissionRole(tc.mode)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("permissionRole(%q) = %q, %v; want %q", tc.mode, got, ok, tc.want)
		}
	}
}

func TestActorRefPseudoUsers(t *testing.T) {
	for _, tc := range []struct {
		u         *gitea.User
		id, login string
	}{
		{nil, "<nil>", "<nil>"},
		{&gitea.User{ID: -1, UserName: "Ghost"}, "<nil>", "<nil>"},
		{&gitea.User{ID: -2, UserName: "forgejo-actions"}, "<nil>", "<nil>"},
		{&gitea.User{ID: 0, UserName: "zero"}, "<nil>", "<nil>"},
		{&gitea.User{ID: 42, UserName: "ann"}, "42", "ann"},
		{&gitea.User{ID: 42}, "42", "<nil>"},
	} {
		r := actorRef(tc.u)
		if deref(r.ID) != tc.id || deref(r.Login) != tc.login {
			t.Errorf("actorRef(%+v) = %s/%s, want %s/%s", tc.u, deref(r.ID), deref(r.Login), tc.id, tc.login)
		}
	}
}

// TestThreadRule exercises the thread identity/order rule on its own: same path+side+line is
// one thread whatever the review or commit; a different side or path is another; comments
// order by created_at then id; resolution comes from the first comment only.
func TestThreadRule(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	res := &gitea.User{ID: 9, UserName: "res"}
	comments := []*gitea.PullReviewComment{
		{ID: 30, ReviewID: 3, Path: "a.go", LineNum: 10, CommitID: headSHA, Created: at("2026-01-01T00:02:00Z")},
		{ID: 20, ReviewID: 2, Path: "a.go", LineNum: 10, CommitID: headSHA, Created: at("2026-01-01T00:01:00Z"), Resolver: res},
		{ID: 25, ReviewID: 2, Path: "a.go", LineNum: 10, CommitID: headSHA, Created: at("2026-01-01T00:01:00Z")},    // same time: id breaks the tie
		{ID: 40, ReviewID: 4, Path: "a.go", LineNum: 10, CommitID: otherSHA, Created: at("2026-01-01T00:00:30Z")},   // other commit, same conversation
		{ID: 50, ReviewID: 4, Path: "a.go", OldLineNum: 10, CommitID: headSHA, Created: at("2026-01-01T00:00:30Z")}, // other side
		{ID: 60, ReviewID: 4, Path: "b.go", LineNum: 10, CommitID: headSHA, Created: at("2026-01-01T00:03:00Z"), Resolver: &gitea.User{ID: -1, UserName: "Ghost"}},
		{ID: 61, ReviewID: 5, Path: "b.go", LineNum: 10, CommitID: headSHA, Created: at("2026-01-01T00:04:00Z"), Resolver: res}, // a later resolver is not the thread's
		{ID: 80, ReviewID: 8, Path: "d.go", LineNum: 3, CommitID: headSHA, Created: at("2026-01-01T00:05:00Z"), Resolver: res},
		{ID: 81, ReviewID: 9, Path: "d.go", LineNum: 3, CommitID: otherSHA, Created: at("2026-01-01T00:06:00Z")}, // a reply after a push
		{ID: 0, Path: "c.go", LineNum: 1, Created: at("2026-01-01T00:00:00Z")},                                   // invalid
		{ID: 70, Path: "c.go", LineNum: 1}, // invalid: no created_at
		nil,
	}
	threads, records, invalid := buildThreads(comments)
	if invalid != 3 {
		t.Errorf("invalid = %d, want 3", invalid)
	}
	if len(records) != 9 {
		t.Errorf("records = %d, want 9", len(records))
	}
	type tv struct {
		id, ids, side string
		resolved      bool
		by            string
	}
	var got []tv
	for _, th := range threads {
		by := ""
		if th.ResolvedBy != nil {
			by = deref(th.ResolvedBy.ID)
		}
		ids := ""
		for i, c := range th.CommentIDs {
			if i > 0 {
				ids += ","
			}
			ids += c
		}
		got = append(got, tv{th.ID, ids, th.Side, th.Resolved, by})
		if th.Outdated {
			t.Errorf("thread %s outdated", th.ID)
		}
		for _, r := range th.Replies {
			if r.ParentID != th.ID {
				t.Errorf("thread %s reply %s parent %s, want the root", th.ID, r.ID, r.ParentID)
			}
		}
	}
	want := []tv{
		// 40 is first, so its (absent) resolver decides: 20's resolver does not resolve it.
		{"40", "40,20,25,30", "right", false, ""},
		{"50", "50", "left", false, ""},
		{"60", "60,61", "right", true, "<nil>"},
		{"80", "80,81", "right", true, "9"}, // the reply on another commit stays in the resolved conversation
	}
	if len(got) != len(want) {
		t.Fatalf("threads = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("thread %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Input order must not matter.
	rev := make([]*gitea.PullReviewComment, len(comments))
	for i := range comments {
		rev[len(comments)-1-i] = comments[i]
	}
	threads2, _, _ := buildThreads(rev)
	for i := range threads {
		if threads[i].ID != threads2[i].ID || len(threads[i].CommentIDs) != len(threads2[i].CommentIDs) {
			t.Fatalf("thread order depends on input order")
		}
	}
}

func TestNativeTime(t *testing.T) {
	for _, tc := range []struct {
		in   *string
		want string
		ok   bool
	}{
		{nil, "", true},
		{strp(""), "", true},
		{strp("1970-01-01T00:00:00Z"), "", true},
		{strp("1970-01-01T01:00:00+01:00"), "", true}, // the epoch in a local zone
		{strp("0001-01-01T00:00:00Z"), "", true},
		{strp("2026-09-10T08:00:10.5+02:00"), "2026-09-10T08:00:10.5+02:00", true},
		{strp("2026-09-10"), "", false},
	} {
		got, ok := nativeTime(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("nativeTime(%s) = %q, %v; want %q, %v", deref(tc.in), got, ok, tc.want, tc.ok)
		}
	}
}

// Gitea stamps a task's start before inserting its row, so a real task reads as started a
// second before it was created (seen on Gitea 1.25.5 under load): the check is created at its
// start, and its times stay in lifecycle order. A task created before it started keeps both.
func TestTaskStartedBeforeItsRowIsCreated(t *testing.T) {
	for _, tc := range []struct{ created, started, wantCreated string }{
		{"2026-12-06T05:33:25Z", "2026-12-06T05:33:24Z", "2026-12-06T05:33:24Z"},
		{"2026-12-06T06:33:25+01:00", "2026-12-06T05:33:24Z", "2026-12-06T05:33:24Z"},
		{"2026-12-06T05:33:20Z", "2026-12-06T05:33:24Z", "2026-12-06T05:33:20Z"},
	} {
		for _, status := range []string{"running", "success"} {
			c, gap := mapTask(task{ID: 3, Name: "build", Status: status, CreatedAt: strp(tc.created),
				RunStartedAt: strp(tc.started), UpdatedAt: strp("2026-12-06T05:33:26Z")}, headSHA)
			if gap != "" || c.CreatedAt != tc.wantCreated || c.StartedAt != tc.started {
				t.Errorf("%s created %s started %s: check created %q started %q (gap %q), want created %s",
					status, tc.created, tc.started, c.CreatedAt, c.StartedAt, gap, tc.wantCreated)
			}
		}
	}
}

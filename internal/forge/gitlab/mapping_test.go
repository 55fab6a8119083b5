package gitlab

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

func TestGitLabEntityStateMappingIsExhaustive(t *testing.T) {
	for _, tc := range []struct {
		mr           bool
		native, want string
	}{
		{false, "opened", "open"},
		{false, "closed", "closed"},
		{false, "locked", ""}, // issues have no lock state in the table
		{false, "merged", ""},
		{true, "opened", "open"},
		{true, "locked", "open"}, // merge-in-progress lock
		{true, "closed", "closed"},
		{true, "merged", "merged"},
		{true, "all", ""},
		{true, "", ""},
	} {
		f := issueState
		if tc.mr {
			f = mergeRequestState
		}
		got, err := f(tc.native)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("mr=%v %q → %q, %v; want %q", tc.mr, tc.native, got, err, tc.want)
		}
	}
}

func TestGitLabAccessLevelRoleTable(t *testing.T) {
	for _, tc := range []struct {
		level int
		want  string
	}{
		{50, "admin"}, {40, "maintain"}, {30, "write"}, {20, "triage"}, {15, "read"}, {10, "read"},
		{5, "none"}, {0, "none"}, {60, ""}, {25, ""}, {-1, ""}, {99, ""},
	} {
		got, ok := Role(gl.AccessLevelValue(tc.level))
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("access level %d → %q %v, want %q", tc.level, got, ok, tc.want)
		}
	}
}

func tp(s string) *time.Time {
	if s == "" {
		return nil
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &v
}

// TestGitLabJobStatusTable proves every row of the spec's GitLab job status table and its
// timestamp rules.
func TestGitLabJobStatusTable(t *testing.T) {
	const c, s, f = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"
	yes, no := true, false
	for _, tc := range []struct {
		status                   string
		started, finished        string
		wantStatus, wantConc     string
		wantStart, wantCompleted string
		wantNever                *bool
		invalid                  string
	}{
		{status: "created", started: s, finished: f, wantStatus: "queued"},
		{status: "waiting_for_resource", wantStatus: "queued"},
		{status: "waiting_for_callback", wantStatus: "queued"},
		{status: "preparing", wantStatus: "queued"},
		{status: "pending", wantStatus: "queued"},
		{status: "scheduled", wantStatus: "queued"},
		{status: "manual", wantStatus: "queued"},
		{status: "running", started: s, wantStatus: "in_progress", wantStart: s},
		{status: "canceling", started: s, finished: f, wantStatus: "in_progress", wantStart: s},
		{status: "running", invalid: "started_at"},
		{status: "success", started: s, finished: f, wantStatus: "completed", wantConc: "success", wantStart: s, wantCompleted: f, wantNever: &no},
		{status: "success", finished: f, invalid: "started_at"},
		{status: "success", started: s, invalid: "finished_at"},
		{status: "failed", started: s, finished: f, wantStatus: "completed", wantConc: "failure", wantStart: s, wantCompleted: f, wantNever: &no},
		{status: "failed", finished: f, invalid: "started_at"}, // ordinary failure without a start
		{status: "canceled", started: s, finished: f, wantStatus: "completed", wantConc: "cancelled", wantStart: s, wantCompleted: f, wantNever: &no},
		{status: "canceled", finished: f, wantStatus: "completed", wantConc: "cancelled", wantCompleted: f, wantNever: &yes},
		{status: "canceled", wantStatus: "completed", wantConc: "cancelled", wantCompleted: c, wantNever: &yes},
		{status: "skipped", wantStatus: "completed", wantConc: "skipped", wantCompleted: c, wantNever: &yes},
		{status: "skipped", started: s, finished: f, wantStatus: "completed", wantConc: "skipped", wantStart: s, wantCompleted: f, wantNever: &no},
		{status: "skipped", started: s, invalid: "finished_at"},
		{status: "bogus_status", invalid: "status"},
		{status: "Success", invalid: "status"},
		{status: "", invalid: "status"},
	} {
		name := tc.status + "/" + tc.started + "/" + tc.finished
		j := &gl.Job{ID: 7, Name: "test", Status: tc.status, CreatedAt: tp(c), StartedAt: tp(tc.started), FinishedAt: tp(tc.finished),
			Commit: &gl.Commit{ID: headSHA}}
		got, err := mapJob(j, headSHA, headSHA)
		if tc.invalid != "" {
			if err == nil || !strings.Contains(err.Error(), tc.invalid) {
				t.Errorf("%s: err = %v, want invalid_metadata on %s", name, err, tc.invalid)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.Status != tc.wantStatus || got.Conclusion != tc.wantConc || got.StartedAt != tc.wantStart || got.CompletedAt != tc.wantCompleted {
			t.Errorf("%s: got %+v", name, got)
		}
		if (got.NeverStarted == nil) != (tc.wantNever == nil) || (got.NeverStarted != nil && *got.NeverStarted != *tc.wantNever) {
			t.Errorf("%s: never_started %v, want %v", name, got.NeverStarted, tc.wantNever)
		}
		if got.ID != "7" || got.CreatedAt != c || got.HeadSHA != headSHA {
			t.Errorf("%s: id/created/head = %s %s %s", name, got.ID, got.CreatedAt, got.HeadSHA)
		}
	}
}

func TestGitLabJobRevisionAndIDRules(t *testing.T) {
	now := tp("2026-01-01T00:00:00Z")
	other := strings.Repeat("a", 40)
	for _, tc := range []struct {
		name    string
		job     gl.Job
		pipeSHA string
		invalid string
	}{
		{"commit id is the reported revision", gl.Job{ID: 1, Status: "pending", CreatedAt: now, Commit: &gl.Commit{ID: headSHA}}, other, ""},
		{"pipeline sha when no commit", gl.Job{ID: 1, Status: "pending", CreatedAt: now, Pipeline: gl.JobPipeline{Sha: headSHA}}, other, ""},
		{"listing pipeline sha as the last resort", gl.Job{ID: 1, Status: "pending", CreatedAt: now}, headSHA, ""},
		{"another revision", gl.Job{ID: 1, Status: "pending", CreatedAt: now, Commit: &gl.Commit{ID: other}}, headSHA, "revision"},
		{"malformed revision", gl.Job{ID: 1, Status: "pending", CreatedAt: now, Commit: &gl.Commit{ID: strings.ToUpper(headSHA)}}, headSHA, "revision"},
		{"no revision", gl.Job{ID: 1, Status: "pending", CreatedAt: now}, "", "revision"},
		{"missing id", gl.Job{ID: 0, Status: "pending", CreatedAt: now, Commit: &gl.Commit{ID: headSHA}}, headSHA, "id"},
		{"missing created_at", gl.Job{ID: 1, Status: "pending", Commit: &gl.Commit{ID: headSHA}}, headSHA, "created_at"},
	} {
		_, err := mapJob(&tc.job, tc.pipeSHA, headSHA)
		if (err != nil) != (tc.invalid != "") || (err != nil && !strings.Contains(err.Error(), tc.invalid)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.invalid)
		}
	}
}

func TestGitLabDiffNotePositionMapping(t *testing.T) {
	for _, tc := range []struct {
		name string
		pos  *gl.NotePosition
		want Location
		ok   bool
	}{
		{"new_line maps to right", &gl.NotePosition{PositionType: "text", NewPath: "a.go", OldPath: "a.go", NewLine: 12}, Location{Path: "a.go", Line: 12, Side: "right"}, true},
		{"new_line and old_line (context line) maps to right", &gl.NotePosition{NewPath: "b.go", OldPath: "a.go", NewLine: 5, OldLine: 4}, Location{Path: "b.go", Line: 5, Side: "right"}, true},
		{"old_line only maps to left at old_path", &gl.NotePosition{NewPath: "b.go", OldPath: "a.go", OldLine: 7}, Location{Path: "a.go", Line: 7, Side: "left"}, true},
		{"range start on the same side", &gl.NotePosition{NewPath: "a.go", NewLine: 12, LineRange: &gl.LineRange{StartRange: &gl.LinePosition{NewLine: 10}, EndRange: &gl.LinePosition{NewLine: 12}}}, Location{Path: "a.go", Line: 12, Side: "right", StartLine: 10}, true},
		{"left range start", &gl.NotePosition{OldPath: "a.go", OldLine: 9, LineRange: &gl.LineRange{StartRange: &gl.LinePosition{OldLine: 3}}}, Location{Path: "a.go", Line: 9, Side: "left", StartLine: 3}, true},
		{"single-line range has no start", &gl.NotePosition{NewPath: "a.go", NewLine: 12, LineRange: &gl.LineRange{StartRange: &gl.LinePosition{NewLine: 12}}}, Location{Path: "a.go", Line: 12, Side: "right"}, true},
		{"file position has a path only", &gl.NotePosition{PositionType: "file", NewPath: "img.png"}, Location{Path: "img.png"}, true},
		{"no path", &gl.NotePosition{NewLine: 3}, Location{}, false},
		{"no position", nil, Location{}, false},
	} {
		got, ok := mapPosition(tc.pos)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %+v %v, want %+v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func note(id int64, author int64, created string) *gl.Note {
	return &gl.Note{ID: id, Body: "b", Author: gl.NoteAuthor{ID: author, Username: "u"}, CreatedAt: tp(created)}
}

func TestGitLabDiscussionRules(t *testing.T) {
	const c = "2026-01-01T00:00:00Z"
	t.Run("system notes are excluded everywhere", func(t *testing.T) {
		sys := note(2, 1, c)
		sys.System = true
		cs, ths, _ := mapDiscussions([]*gl.Discussion{
			{ID: "d1", IndividualNote: true, Notes: []*gl.Note{sys}},
			{ID: "d2", Notes: []*gl.Note{sys, note(3, 1, c), note(4, 1, c)}},
		})
		if len(cs) != 2 || cs[0].ID != "3" || len(ths) != 1 || ths[0].CommentIDs[0] != "3" || ths[0].Replies[0].ParentID != "3" {
			t.Errorf("comments %+v threads %+v", cs, ths)
		}
	})
	t.Run("a thread of only system notes is no thread", func(t *testing.T) {
		sys := note(2, 1, c)
		sys.System = true
		cs, ths, _ := mapDiscussions([]*gl.Discussion{{ID: "d", Notes: []*gl.Note{sys}}})
		if len(cs) != 0 || len(ths) != 0 {
			t.Errorf("%v %v", cs, ths)
		}
	})
	t.Run("resolved requires every resolvable note resolved", func(t *testing.T) {
		a, b := note(1, 1, c), note(2, 1, c)
		a.Resolvable, b.Resolvable, a.Resolved = true, true, true
		_, ths, _ := mapDiscussions([]*gl.Discussion{{ID: "d", Notes: []*gl.Note{a, b}}})
		if ths[0].Resolved || ths[0].ResolvedBy != nil {
			t.Errorf("partially resolved thread reported resolved: %+v", ths[0])
		}
	})
	t.Run("resolved without a resolver records a null reference", func(t *testing.T) {
		a := note(1, 1, c)
		a.Resolvable, a.Resolved = true, true
		_, ths, _ := mapDiscussions([]*gl.Discussion{{ID: "d", Notes: []*gl.Note{a}}})
		if !ths[0].Resolved || ths[0].ResolvedBy == nil || ths[0].ResolvedBy.ID != nil {
			t.Errorf("%+v", ths[0])
		}
	})
	t.Run("non-resolvable thread is unresolved", func(t *testing.T) {
		_, ths, _ := mapDiscussions([]*gl.Discussion{{ID: "d", Notes: []*gl.Note{note(1, 1, c)}}})
		if ths[0].Resolved || ths[0].ResolvedBy != nil || ths[0].Outdated {
			t.Errorf("%+v", ths[0])
		}
	})
	t.Run("note without id or created_at is invalid_metadata", func(t *testing.T) {
		cs, ths, out := mapDiscussions([]*gl.Discussion{
			{ID: "d1", IndividualNote: true, Notes: []*gl.Note{note(0, 1, c)}},
			{ID: "d2", IndividualNote: true, Notes: []*gl.Note{{ID: 5, Author: gl.NoteAuthor{ID: 1}}}},
		})
		if len(cs) != 0 || len(ths) != 0 || gapCount(out.Comments, "invalid_metadata") != 2 {
			t.Errorf("%v %v %+v", cs, ths, out)
		}
	})
	t.Run("discussion id outside the mapping drops the thread, keeps comments", func(t *testing.T) {
		cs, ths, out := mapDiscussions([]*gl.Discussion{{ID: "bad/id", Notes: []*gl.Note{note(1, 1, c), note(2, 1, c)}}})
		if len(cs) != 2 || len(ths) != 0 || gapCount(out.Comments, "invalid_metadata") != 1 {
			t.Errorf("%v %v %+v", cs, ths, out)
		}
	})
	t.Run("deleted author keeps a null reference", func(t *testing.T) {
		cs, _, _ := mapDiscussions([]*gl.Discussion{{ID: "d", IndividualNote: true, Notes: []*gl.Note{note(1, 0, c)}}})
		if cs[0].Author.ID != nil || cs[0].Author.Login != nil {
			t.Errorf("%+v", cs[0].Author)
		}
	})
}

func TestGitLabHeadSHACapture(t *testing.T) {
	other := strings.Repeat("b", 40)
	for _, tc := range []struct {
		sha, diff, want string
	}{
		{headSHA, headSHA, headSHA},
		{headSHA, "", headSHA},
		{"", headSHA, headSHA},
		{headSHA, other, ""}, // disagreeing answers: no revision
		{"", "", ""},
		{"abc", "", ""},
	} {
		mr := &gl.MergeRequest{}
		mr.SHA = tc.sha
		mr.DiffRefs.HeadSha = tc.diff
		if got := HeadSHA(mr); got != tc.want {
			t.Errorf("sha %q diff %q → %q, want %q", tc.sha, tc.diff, got, tc.want)
		}
	}
}

// FuzzMapJob feeds arbitrary job JSON through the mapper: it never panics, and every check
// it emits satisfies the spec's status/timestamp invariants.
func FuzzMapJob(f *testing.F) {
	f.Add([]byte(`{"id":1,"status":"failed","created_at":"2026-01-01T00:00:00Z","commit":{"id":"` + headSHA + `"}}`))
	f.Add([]byte(`{"id":2,"status":"canceled","created_at":"2026-01-01T00:00:00Z","started_at":null,"finished_at":"2026-01-01T00:00:01Z","pipeline":{"sha":"` + headSHA + `"}}`))
	f.Add([]byte(`{"id":3,"status":"running","created_at":"2026-01-01T00:00:00Z","started_at":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"id":-4,"status":"manual"}`))
	// Real job objects (test/fixtures/gitlab/real/jobs.json), one seed each.
	var real []json.RawMessage
	if err := json.Unmarshal(fixture(f, "real/jobs.json"), &real); err != nil {
		f.Fatal(err)
	}
	for _, j := range real {
		f.Add([]byte(strings.ReplaceAll(string(j), realHead, headSHA)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var j gl.Job
		if json.Unmarshal(data, &j) != nil {
			return
		}
		c, err := mapJob(&j, headSHA, headSHA)
		if err != nil {
			return
		}
		checkInvariants(t, c)
	})
}

func checkInvariants(t *testing.T, c acquisition.Check) {
	t.Helper()
	if c.ID == "" || c.CreatedAt == "" || c.HeadSHA != headSHA {
		t.Fatalf("incomplete check %+v", c)
	}
	switch c.Status {
	case "queued":
		if c.StartedAt != "" || c.CompletedAt != "" || c.Conclusion != "" || c.NeverStarted != nil {
			t.Fatalf("queued with terminal fields %+v", c)
		}
	case "in_progress":
		if c.StartedAt == "" || c.CompletedAt != "" || c.Conclusion != "" {
			t.Fatalf("bad in_progress %+v", c)
		}
	case "completed":
		if c.CompletedAt == "" || c.Conclusion == "" || c.NeverStarted == nil {
			t.Fatalf("bad completed %+v", c)
		}
		if *c.NeverStarted && (c.StartedAt != "" || (c.Conclusion != "cancelled" && c.Conclusion != "skipped")) {
			t.Fatalf("bad never_started %+v", c)
		}
		if !*c.NeverStarted && c.StartedAt == "" {
			t.Fatalf("started check without started_at %+v", c)
		}
	default:
		t.Fatalf("status %q", c.Status)
	}
}

// FuzzMapDiscussions: arbitrary discussion JSON never panics, emitted threads only reference
// emitted comments and use ids inside the GitLab mappings.
func FuzzMapDiscussions(f *testing.F) {
	f.Add([]byte(`[{"id":"abc","individual_note":false,"notes":[{"id":1,"created_at":"2026-01-01T00:00:00Z","author":{"id":2},"position":{"new_path":"a","new_line":3}},{"id":2,"system":true}]}]`))
	f.Add([]byte(`[{"id":"x y","notes":[{"id":1,"created_at":"2026-01-01T00:00:00Z","resolvable":true,"resolved":true,"resolved_by":{"id":9}}]}]`))
	f.Add([]byte(`[null,{"notes":[null]}]`))
	f.Add(fixture(f, "real/discussions_page1.json"))
	f.Add(fixture(f, "real/discussions_page2.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ds []*gl.Discussion
		if json.Unmarshal(data, &ds) != nil {
			return
		}
		cs, ths, _ := mapDiscussions(ds)
		ids := map[string]bool{}
		for _, c := range cs {
			if !numericID.MatchString(c.ID) {
				t.Fatalf("comment id %q", c.ID)
			}
			ids[c.ID] = true
		}
		for _, th := range ths {
			if !validDiscussionID(th.ID) || th.Outdated {
				t.Fatalf("thread %+v", th)
			}
			for _, id := range th.CommentIDs {
				if !ids[id] {
					t.Fatalf("thread references unknown comment %s", id)
				}
			}
		}
	})
}

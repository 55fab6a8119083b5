package ghscenario

import (
	"fmt"
	"strings"
	"time"
)

// Test profile conventions the scenarios are built for: check_log_selection "failed" and
// max_source_bytes MaxSourceBytes.
const MaxSourceBytes = 4096

// LogSelectedFailed mirrors check_log_selection "failed".
func LogSelectedFailed(c string) bool {
	switch c {
	case "failure", "timed_out", "action_required", "stale":
		return true
	}
	return false
}

var base = time.Date(2026, 9, 8, 10, 0, 0, 0, time.UTC)

func at(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }

func atp(min int) *time.Time { t := at(min); return &t }

func ip(i int) *int { return &i }

func sp(s string) *string { return &s }

// Users of the small scenarios: one per role, a custom role, an outside user (404), bots.
var (
	Alice    = &User{Login: "alice", ID: 1001, NodeID: "U_kgDOAAAD6Q", Role: "admin", Permission: "admin"}
	Bob      = &User{Login: "bob", ID: 1002, NodeID: "U_kgDOAAAD6g", Role: "maintain", Permission: "write"}
	Carol    = &User{Login: "carol", ID: 1003, NodeID: "U_kgDOAAAD6w", Role: "write", Permission: "write"}
	Dave     = &User{Login: "dave", ID: 1004, NodeID: "U_kgDOAAAD7A", Role: "triage", Permission: "read"}
	Erin     = &User{Login: "erin", ID: 1005, NodeID: "U_kgDOAAAD7Q", Role: "security-reviewer", Permission: "write"}
	Frank    = &User{Login: "frank", ID: 1006, NodeID: "U_kgDOAAAD7g", Role: "read", Permission: "read"}
	Mallory  = &User{Login: "mallory", ID: 1007, NodeID: "U_kgDOAAAD7w"} // not a collaborator: 404
	Renovate = &User{Login: "renovate[bot]", ID: 29139614, NodeID: "BOT_kgDOAb4Bng", Bot: true}
	Actions  = &User{Login: "github-actions[bot]", ID: 41898282, NodeID: "BOT_kgDOAn-Zag", Bot: true}
)

const (
	repoID  = "R_kgDOLq3Xzw"
	headSHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	oldSHA  = "a5f1c4c0e1d8b0f2e3a4b5c6d7e8f90123456789"
)

// Issue is a closed issue with labels and comments by a role-holder, a bot, a deleted account
// and an outside user.
func Issue() *Scenario {
	return &Scenario{
		Owner: "octo-org", Repo: "Hello-World", RepoID: repoID, Number: 7, NodeID: "I_kwDOLq3Xz86Ab1",
		State: "CLOSED", Title: "Crash on empty config", Body: "Steps to reproduce:\r\n1. run with `{}`\r\n",
		Author: Dave, Labels: []string{"needs-triage", "bug", "area/api"},
		CreatedAt: at(0), UpdatedAt: at(90),
		Comments: []Comment{
			{ID: 2001, NodeID: "IC_kwDOLq3Xz86AAAfR", User: Alice, Body: "Confirmed on main.", CreatedAt: at(5), UpdatedAt: at(6)},
			{ID: 2002, NodeID: "IC_kwDOLq3Xz86AAAfS", User: Renovate, Body: "Dependency update available.", CreatedAt: at(10), UpdatedAt: at(10)},
			{ID: 2003, NodeID: "IC_kwDOLq3Xz86AAAfT", User: nil, Body: "(from a deleted account)", CreatedAt: at(20), UpdatedAt: at(20)},
			{ID: 2004, NodeID: "IC_kwDOLq3Xz86AAAfU", User: Mallory, Body: "me too", CreatedAt: at(30), UpdatedAt: at(30)},
			{ID: 2005, NodeID: "IC_kwDOLq3Xz86AAAfV", User: Frank, Body: "Fixed by #8.", CreatedAt: at(60), UpdatedAt: at(60)},
		},
	}
}

// PR is an open pull request with every review state, threads (resolved, outdated,
// multi-line, bot), and check runs covering the status/conclusion table.
func PR() *Scenario {
	c := func(id int64, node string, u *User, min int, body string) Comment {
		return Comment{ID: id, NodeID: node, User: u, Body: body, CreatedAt: at(min), UpdatedAt: at(min)}
	}
	tc := func(node string, u *User, min int, body, reply, review string) Comment {
		return Comment{NodeID: node, User: u, Body: body, CreatedAt: at(min), UpdatedAt: at(min), ReplyTo: reply, ReviewID: review}
	}
	long := strings.Repeat("0123456789abcdef", MaxSourceBytes/16+64) // over max_source_bytes
	return &Scenario{
		Owner: "octo-org", Repo: "Hello-World", RepoID: repoID, Number: 42, NodeID: "PR_kwDOLq3Xz85xYz01",
		PR: true, State: "OPEN", Title: "Add retry to the uploader", Body: "Closes #7.\n",
		Author: Bob, Labels: []string{"enhancement"}, CreatedAt: at(100), UpdatedAt: at(400), HeadSHA: headSHA,
		Comments: []Comment{
			c(3001, "IC_kwDOLq3Xz86AAAu5", Carol, 110, "Looks good overall."),
			c(3002, "IC_kwDOLq3Xz86AAAu6", Actions, 120, "Preview deployed."),
		},
		Reviews: []Review{
			{ID: 80, NodeID: "PRR_kwDOLq3Xz86AAABQ", User: Alice, State: "APPROVED", Body: "LGTM", SubmittedAt: atp(200), CommitID: headSHA},
			{ID: 81, NodeID: "PRR_kwDOLq3Xz86AAABR", User: Carol, State: "CHANGES_REQUESTED", Body: "Please add a test.", SubmittedAt: atp(150), CommitID: oldSHA},
			{ID: 82, NodeID: "PRR_kwDOLq3Xz86AAABS", User: Erin, State: "COMMENTED", Body: "", SubmittedAt: atp(160), CommitID: oldSHA},
			{ID: 83, NodeID: "PRR_kwDOLq3Xz86AAABT", User: Dave, State: "DISMISSED", Body: "Blocking.", SubmittedAt: atp(140), CommitID: oldSHA,
				DismissedBy: Alice, DismissedAt: atp(210)},
			{ID: 84, NodeID: "PRR_kwDOLq3Xz86AAABU", User: Frank, State: "DISMISSED", Body: "Old objection.", SubmittedAt: atp(145), CommitID: oldSHA},
			{ID: 85, NodeID: "PRR_kwDOLq3Xz86AAABV", User: Bob, State: "PENDING", Body: "draft"},
		},
		Threads: []Thread{
			{NodeID: "PRRT_kwDOLq3Xz85Aa001", Resolved: true, ResolvedBy: Alice, Path: "uploader/retry.go",
				Line: ip(10), OriginalLine: ip(10), DiffSide: "RIGHT",
				Comments: []Comment{
					tc("PRRC_kwDOLq3Xz86Bb001", Carol, 151, "Off by one?", "", "PRR_kwDOLq3Xz86AAABR"),
					tc("PRRC_kwDOLq3Xz86Bb002", Bob, 170, "Fixed.", "PRRC_kwDOLq3Xz86Bb001", "PRR_kwDOLq3Xz86AAABW"),
					tc("PRRC_kwDOLq3Xz86Bb003", Carol, 175, "Thanks.", "PRRC_kwDOLq3Xz86Bb001", "PRR_kwDOLq3Xz86AAABX"),
				}},
			{NodeID: "PRRT_kwDOLq3Xz85Aa002", Outdated: true, Path: "uploader/upload.go",
				Line: nil, StartLine: nil, OriginalLine: ip(44), OriginalStartLine: ip(40), DiffSide: "LEFT", StartDiffSide: sp("LEFT"),
				Comments: []Comment{tc("PRRC_kwDOLq3Xz86Bb004", Erin, 161, "Why remove this?", "", "PRR_kwDOLq3Xz86AAABS")}},
			{NodeID: "PRRT_kwDOLq3Xz85Aa003", Path: "README.md", Line: ip(3), StartLine: ip(1), OriginalLine: ip(3), OriginalStartLine: ip(1),
				DiffSide: "RIGHT", StartDiffSide: sp("RIGHT"),
				Comments: []Comment{
					tc("PRRC_kwDOLq3Xz86Bb005", Mallory, 180, "typo", "", "PRR_kwDOLq3Xz86AAABY"),
					tc("PRRC_kwDOLq3Xz86Bb006", nil, 181, "(deleted account reply)", "PRRC_kwDOLq3Xz86Bb005", "PRR_kwDOLq3Xz86AAABZ"),
				}},
		},
		LogSelected: LogSelectedFailed,
		Checks: []CheckRun{
			{ID: 501, NodeID: "CR_kwDOLq3Xz88AAAAB9Q", Name: "build", HeadSHA: headSHA, Status: "completed", Conclusion: "success",
				StartedAt: atp(301), CompletedAt: atp(305), Actions: true, RunID: 9001, JobCreated: at(300)},
			{ID: 502, NodeID: "CR_kwDOLq3Xz88AAAAB9g", Name: "test", HeadSHA: headSHA, Status: "completed", Conclusion: "failure",
				StartedAt: atp(302), CompletedAt: atp(310), Actions: true, RunID: 9001, JobCreated: at(300),
				Log: "2026-09-08T15:02:00.0000000Z ##[group]Run go test ./...\r\n--- FAIL: TestUpload (0.01s)\r\n##[error]Process completed with exit code 1.\r\n"},
			{ID: 503, NodeID: "CR_kwDOLq3Xz88AAAAB9w", Name: "lint", HeadSHA: headSHA, Status: "completed", Conclusion: "startup_failure",
				CompletedAt: atp(300), Actions: true, RunID: 9002, JobCreated: at(299), Log: "startup failure\n"},
			{ID: 504, NodeID: "CR_kwDOLq3Xz88AAAAB-A", Name: "docs", HeadSHA: headSHA, Status: "completed", Conclusion: "skipped",
				CompletedAt: atp(300), Actions: true, RunID: 9002, JobCreated: at(299)},
			{ID: 505, NodeID: "CR_kwDOLq3Xz88AAAAB-Q", Name: "deploy", HeadSHA: headSHA, Status: "completed", Conclusion: "cancelled",
				StartedAt: atp(303), CompletedAt: atp(304), Actions: true, RunID: 9002, JobCreated: at(299)},
			{ID: 506, NodeID: "CR_kwDOLq3Xz88AAAAB-g", Name: "e2e", HeadSHA: headSHA, Status: "waiting",
				Actions: true, RunID: 9002, JobCreated: at(299)},
			{ID: 507, NodeID: "CR_kwDOLq3Xz88AAAAB-w", Name: "integration", HeadSHA: headSHA, Status: "in_progress",
				StartedAt: atp(306), Actions: true, RunID: 9002, JobCreated: at(299)},
			{ID: 508, NodeID: "CR_kwDOLq3Xz88AAAAB_A", Name: "external-ci", HeadSHA: headSHA, Status: "completed", Conclusion: "success",
				StartedAt: atp(301), CompletedAt: atp(302)},
			{ID: 509, NodeID: "CR_kwDOLq3Xz88AAAAB_Q", Name: "mystery", HeadSHA: headSHA, Status: "completed", Conclusion: "exploded",
				StartedAt: atp(301), CompletedAt: atp(302), Actions: true, RunID: 9002, JobCreated: at(299)},
			{ID: 510, NodeID: "CR_kwDOLq3Xz88AAAAB_g", Name: "stale-rev", HeadSHA: oldSHA, Status: "completed", Conclusion: "success",
				StartedAt: atp(201), CompletedAt: atp(202), Actions: true, RunID: 9002, JobCreated: at(200)},
			{ID: 511, NodeID: "CR_kwDOLq3Xz88AAAAB_w", Name: "soak", HeadSHA: headSHA, Status: "completed", Conclusion: "timed_out",
				StartedAt: atp(301), CompletedAt: atp(360), Actions: true, RunID: 9001, JobCreated: at(300), Log: long},
		},
	}
}

// MergedBots is a merged pull request opened by a bot, with comments by a bot, an outside
// user and a custom-role user, and no reviews, threads or checks (empty lists).
func MergedBots() *Scenario {
	return &Scenario{
		Owner: "octo-org", Repo: "Hello-World", RepoID: repoID, Number: 43, NodeID: "PR_kwDOLq3Xz85xYz02",
		PR: true, State: "CLOSED", Merged: true, Title: "Bump golang.org/x/net from 0.30.0 to 0.33.0", Body: "Bumps x/net.\n",
		Author: Renovate, Labels: []string{"dependencies"}, CreatedAt: at(500), UpdatedAt: at(600), HeadSHA: oldSHA,
		Comments: []Comment{
			{ID: 4001, NodeID: "IC_kwDOLq3Xz86AAA-h", User: Actions, Body: "All checks passed.", CreatedAt: at(510), UpdatedAt: at(510)},
			{ID: 4002, NodeID: "IC_kwDOLq3Xz86AAA-i", User: Mallory, Body: "please merge", CreatedAt: at(520), UpdatedAt: at(520)},
			{ID: 4003, NodeID: "IC_kwDOLq3Xz86AAA-j", User: Erin, Body: "Reviewed the changelog.", CreatedAt: at(530), UpdatedAt: at(531)},
		},
		LogSelected: LogSelectedFailed,
	}
}

// manyComments makes n issue comments cycling through users.
func manyComments(n int, users []*User, idBase int64, start int) []Comment {
	out := make([]Comment, n)
	for i := range out {
		id := idBase + int64(i)
		out[i] = Comment{ID: id, NodeID: fmt.Sprintf("IC_kwDOLq3Xz86C%07d", id), User: users[i%len(users)],
			Body: fmt.Sprintf("comment %d", i), CreatedAt: at(start + i), UpdatedAt: at(start + i)}
	}
	return out
}

// PaginationExact is an issue with exactly two full pages of comments (the last full page has
// no rel="next").
func PaginationExact() *Scenario {
	return &Scenario{
		Owner: "octo-org", Repo: "Hello-World", RepoID: repoID, Number: 100, NodeID: "I_kwDOLq3Xz86Ab100",
		State: "OPEN", Title: "Two full pages", Body: "", Author: Alice, CreatedAt: at(0), UpdatedAt: at(300),
		Comments: manyComments(2*100, []*User{Alice, Carol, Dave}, 100000, 1),
	}
}

// PaginationEmptyPage is an issue whose comment list ends with an announced empty page, and
// which has no labels.
func PaginationEmptyPage() *Scenario {
	return &Scenario{
		Owner: "octo-org", Repo: "Hello-World", RepoID: repoID, Number: 101, NodeID: "I_kwDOLq3Xz86Ab101",
		State: "OPEN", Title: "Trailing empty page", Body: "body\n", Author: Carol, CreatedAt: at(0), UpdatedAt: at(200),
		Comments: manyComments(100, []*User{Carol}, 200000, 1), EmptyLastCommentsPage: true,
	}
}

// Small lists the committed scenarios by directory name.
func Small() map[string]func() *Scenario {
	return map[string]func() *Scenario{
		"issue":                 Issue,
		"pr":                    PR,
		"pr-merged-bots":        MergedBots,
		"pagination-exact":      PaginationExact,
		"pagination-empty-page": PaginationEmptyPage,
	}
}

// Large is the issue's large scenario: a pull request with 1,000 issue comments, 120 reviews,
// 300 review threads (one of 150 comments) and 40 check runs across two head revisions (20
// each; only the captured head's are requested). Actors: 60 humans with assorted roles and
// two bots.
func Large() *Scenario {
	roles := []string{"admin", "maintain", "write", "triage", "read", ""}
	var users []*User
	for i := range 60 {
		r := roles[i%len(roles)]
		p := map[string]string{"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read", "": ""}[r]
		users = append(users, &User{Login: fmt.Sprintf("user%02d", i), ID: int64(5000 + i), NodeID: fmt.Sprintf("U_kgDOAAA%04d", i), Role: r, Permission: p})
	}
	commenters := append(append([]*User{}, users...), Renovate, Actions)
	s := &Scenario{
		Owner: "octo-org", Repo: "Hello-World", RepoID: repoID, Number: 5000, NodeID: "PR_kwDOLq3Xz85xL5000",
		PR: true, State: "OPEN", Title: "Large refactor", Body: "A long-running refactor.\n", Author: users[0],
		Labels: []string{"refactor", "large"}, CreatedAt: at(0), UpdatedAt: at(20000), HeadSHA: headSHA, OtherSHA: oldSHA,
		Comments:    manyComments(1000, commenters, 1000000, 1),
		LogSelected: LogSelectedFailed,
	}
	states := []string{"APPROVED", "CHANGES_REQUESTED", "COMMENTED", "COMMENTED", "DISMISSED"}
	for i := range 120 {
		r := Review{ID: int64(7000 + i), NodeID: fmt.Sprintf("PRR_kwDOLq3Xz86R%05d", i), User: users[i%len(users)],
			State: states[i%len(states)], Body: fmt.Sprintf("review %d", i), SubmittedAt: atp(2000 + i), CommitID: headSHA}
		if r.State == "DISMISSED" {
			r.DismissedBy, r.DismissedAt = users[0], atp(3000+i)
		}
		s.Reviews = append(s.Reviews, r)
	}
	for i := range 300 {
		n := 1 + i%2
		if i == 0 {
			n = 150
		}
		th := Thread{NodeID: fmt.Sprintf("PRRT_kwDOLq3Xz85T%05d", i), Resolved: i%3 == 0, Outdated: i%7 == 0,
			Path: fmt.Sprintf("pkg/mod%d/file.go", i%17), Line: ip(10 + i), OriginalLine: ip(10 + i), DiffSide: "RIGHT"}
		if th.Resolved {
			th.ResolvedBy = users[(i+1)%len(users)]
		}
		review := s.Reviews[i%len(s.Reviews)].NodeID
		first := fmt.Sprintf("PRRC_kwDOLq3Xz86T%05d%03d", i, 0)
		for j := range n {
			c := Comment{NodeID: fmt.Sprintf("PRRC_kwDOLq3Xz86T%05d%03d", i, j), User: commenters[(i+j)%len(commenters)],
				Body: fmt.Sprintf("thread %d comment %d", i, j), CreatedAt: at(4000 + i*2 + j), UpdatedAt: at(4000 + i*2 + j), ReviewID: review}
			if j > 0 {
				c.ReplyTo = first
			}
			th.Comments = append(th.Comments, c)
		}
		s.Threads = append(s.Threads, th)
	}
	conclusions := []string{"success", "success", "success", "failure", "skipped"}
	for i := range 20 {
		concl := conclusions[i%len(conclusions)]
		ck := CheckRun{ID: int64(80000 + i), NodeID: fmt.Sprintf("CR_kwDOLq3Xz88L%05d", i), Name: fmt.Sprintf("job-%02d", i),
			HeadSHA: headSHA, Status: "completed", Conclusion: concl, CompletedAt: atp(10100 + i),
			Actions: true, RunID: int64(60000 + i%4), JobCreated: at(10000)}
		if concl != "skipped" {
			ck.StartedAt = atp(10050 + i)
		}
		if concl == "failure" {
			ck.Log = strings.Repeat(fmt.Sprintf("job %d log line\n", i), 50)
		}
		s.Checks = append(s.Checks, ck)
		old := ck
		old.ID, old.NodeID, old.HeadSHA, old.RunID = int64(70000+i), fmt.Sprintf("CR_kwDOLq3Xz88O%05d", i), oldSHA, int64(50000+i%4)
		s.OtherChecks = append(s.OtherChecks, old)
	}
	return s
}

package forgejo

import (
	"errors"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Listing names (keys of listings).
const (
	listIssueComments  = "issue_comments"
	listReceipts       = "receipts"
	listReviews        = "reviews"
	listReviewComments = "review_comments"
	listTasks          = "tasks"
	listTaskLogs       = "task_logs"
	listStatuses       = "commit_statuses"
	listPermissions    = "permissions"
)

// listings is the adapter's dependency map, as data: every list it reads and the scopes an
// incomplete read of it shortens. Receipts and task logs are read from no endpoint of their
// own (receipts are issue comments; Forgejo serves no task log), but an unread parent row
// still loses them, so they are listings too. docs/forgejo.md has the same table in prose.
var listings = forge.NewListings(
	forge.Listing{Name: listIssueComments, Endpoint: "/repos/{owner}/{repo}/issues/{n}/comments", Paged: true,
		Scopes: []string{acquisition.ScopeComments}, Feeds: []string{listReceipts}},
	forge.Listing{Name: listReceipts, Scopes: []string{acquisition.ScopeAgentRuns}},
	forge.Listing{Name: listReviews, Endpoint: "/repos/{owner}/{repo}/pulls/{n}/reviews", Paged: true,
		Scopes: []string{acquisition.ScopeReviews}, Feeds: []string{listReviewComments}},
	// A review's comments are comment records and form the threads of the reviews relation.
	forge.Listing{Name: listReviewComments, Endpoint: "/repos/{owner}/{repo}/pulls/{n}/reviews/{id}/comments",
		Scopes: []string{acquisition.ScopeComments, acquisition.ScopeReviews}},
	forge.Listing{Name: listTasks, Endpoint: "/repos/{owner}/{repo}/actions/tasks", Paged: true,
		Scopes: []string{acquisition.ScopeChecks}, Feeds: []string{listTaskLogs}},
	forge.Listing{Name: listTaskLogs, Scopes: []string{acquisition.ScopeCheckLogs}},
	// The head's latest status per context; those no head task accounts for are checks gaps.
	forge.Listing{Name: listStatuses, Endpoint: "/repos/{owner}/{repo}/commits/{sha}/status", Paged: true,
		Scopes: []string{acquisition.ScopeChecks}},
	forge.Listing{Name: listPermissions, Endpoint: "/repos/{owner}/{repo}/collaborators/{user}/permission",
		Scopes: []string{acquisition.ScopeActors}},
)

// lenient returns the options of a lenient walk of listing name: a re-read after a move is
// logged.
func (r *run) lenient(name string) LenientOptions {
	return LenientOptions{Rereading: func() {
		r.c.log.Warn().Str("forge", Forge).Str("listing", name).Msg("forgejo list moved while read; reading it again")
	}}
}

// standing records one lenient read of listing name for the statistics: its pages over every
// attempt, and the read that stands for the lower bound. The bound counts pages at the size the
// server actually served (Gitea clamps limit to MAX_RESPONSE_ITEMS, and its comments endpoint
// ignores page/limit altogether), never at the size asked for, and only for the read that
// stands; Acquire counts it once every listing is read (listBound), because the server's page
// size can show in another listing than this one.
func standing[T any](r *run, name string, l LenientList[T]) LenientList[T] {
	r.pages[name] += l.Pages
	r.lists = append(r.lists, l.Pagination)
	return l
}

// listBound is the requests a perfect run needs for the listings read: each listing's pages at
// the page size the server served (forge.ServedPageSize over every listing of the run, at
// least the listing's own largest page), so a listing whose every page came back short of
// rows the token may not see is not counted at that short size.
func (r *run) listBound() int {
	size := forge.ServedPageSize(r.lists)
	n := 0
	for _, pg := range r.lists {
		n += pg.NeededAt(size)
	}
	return n
}

// shortfall records that listing name ended incomplete: every scope it shortens that the
// profile selects gets the gap (listings, the dependency map). A listing whose endpoint does
// not exist on the instance (404: Actions disabled, an old Forgejo) is unsupported.
func (r *run) shortfall(name string, err error, lost int, selected func(scope string) bool) {
	code := gapFor(err)
	if statusOf(err) == http.StatusNotFound && name == listTasks {
		code = acquisition.GapUnsupported
	}
	listings.Shortfall(&r.a.Outcomes, name, code, lost, selected)
	ev := r.c.log.Warn().Str("forge", Forge).Str("listing", name).Str("code", code).Int("status", statusOf(err)).Int("lost", lost)
	var e *APIError
	if errors.As(err, &e) {
		ev = ev.Str("op", e.Op)
	}
	ev.Msg("forgejo listing incomplete")
}

// rawTime parses a native timestamp for the drift check (zero when absent or malformed: the
// row then cannot prove it is newer than the read, and the other checks still apply).
func rawTime(p *string) time.Time {
	if p == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, *p)
	if err != nil {
		return time.Time{}
	}
	return t
}

// reviewKey: a review's creation time, or its submission when the answer has none.
func reviewKey(nr nativeReview) rowKey {
	t := rawTime(nr.CreatedAt)
	if t.IsZero() {
		t = rawTime(nr.SubmittedAt)
	}
	return rowKey{id: nr.ID, created: t}
}

func taskKey(t task) rowKey { return rowKey{id: t.ID, created: rawTime(t.CreatedAt)} }

// unaccounted counts the commit statuses no head task accounts for. Gitea and Forgejo name an
// Actions job's status "<workflow> / <job> (<event>)", where <workflow> is the workflow's
// name: or, without one, the base name of its file (the task's workflow_id) on Forgejo and an
// empty name on Gitea 1.25 (the context, trimmed, is then "/ <job> (<event>)"); the task row
// carries the job name and the event but not the name:. So a status is accounted for when a
// head task — a check, or a task already counted as a gap — claims it, each task claiming at
// most one status:
//
//  1. exactly: the context is "<base(workflow_id)> / <name> (<event>)" of the task;
//  2. else by its job and event, the prefix (possibly empty) standing for the name:, for a task
//     whose workflow claimed no status exactly (a workflow with a name: never shows its file
//     name) and with one prefix per workflow (all of a workflow's jobs carry the same name:).
//
// Every other status — external CI, a job without a task (waiting for a runner, blocked on
// needs:), a task with no name or event, a context in another form — stays unaccounted, and
// so a gap: when unsure, gap. Statuses are matched in context order, so the count is
// deterministic.
func unaccounted(statuses []commitStatus, tasks []task) int {
	ctxs := make([]string, 0, len(statuses))
	for _, s := range statuses {
		ctxs = append(ctxs, s.Context)
	}
	sort.Strings(ctxs)
	used := make([]bool, len(tasks))
	exact := map[string]bool{} // workflows that claimed a status by file name
	left := ctxs[:0:0]
	for _, c := range ctxs {
		if i := claim(tasks, used, func(t task) bool {
			return t.Name != "" && t.Event != "" && c == statusContext(path.Base(t.WorkflowID), t)
		}); i >= 0 {
			exact[tasks[i].WorkflowID] = true
			continue
		}
		left = append(left, c)
	}
	prefix := map[string]string{} // workflow → the name: its statuses carry
	n := 0
	for _, c := range left {
		var p string
		i := claim(tasks, used, func(t task) bool {
			if t.Name == "" || t.Event == "" || exact[t.WorkflowID] {
				return false
			}
			var ok bool
			if p, ok = workflowPrefix(c, t); !ok {
				return false
			}
			q, seen := prefix[t.WorkflowID]
			return !seen || q == p
		})
		if i < 0 {
			n++
			continue
		}
		prefix[tasks[i].WorkflowID] = p
	}
	return n
}

// workflowPrefix is the workflow name c carries before t's job and event, if c names them.
// Gitea 1.25 writes the workflow's name: even when it is empty, and trims the context, so a
// workflow without a name: shows as "/ <job> (<event>)": the empty prefix.
func workflowPrefix(c string, t task) (string, bool) {
	if c == strings.TrimSpace(statusContext("", t)) {
		return "", true
	}
	p, ok := strings.CutSuffix(c, statusContext("", t))
	return p, ok && p != ""
}

// statusContext is the context Gitea gives an Actions job's commit status.
func statusContext(workflow string, t task) string {
	return workflow + " / " + t.Name + " (" + t.Event + ")"
}

// claim marks and returns the first unused task ok accepts, or -1.
func claim(tasks []task, used []bool, ok func(task) bool) int {
	for i, t := range tasks {
		if !used[i] && ok(t) {
			used[i] = true
			return i
		}
	}
	return -1
}

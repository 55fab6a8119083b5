package forgejo

import (
	"strconv"
	"strings"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// mapEntityState applies the spec's exhaustive Forgejo entity-state table ("Relationship to
// normalized-event v1"): open and closed map to themselves; a pull request with merged: true
// is merged regardless of its native closed state. ok is false for any other native state.
func mapEntityState(native string, isPull, merged bool) (state string, ok bool) {
	if isPull && merged {
		return "merged", true
	}
	switch native {
	case "open":
		return "open", true
	case "closed":
		return "closed", true
	}
	return "", false
}

// reviewDisposition says what happens to one native review row.
type reviewDisposition int

const (
	reviewKeep    reviewDisposition = iota // a submitted review: mapped state
	reviewOmit                             // an unsubmitted row (PENDING, REQUEST_REVIEW): not a record, no gap
	reviewInvalid                          // any other native state: invalid_metadata
)

// mapReviewState applies the spec's exhaustive Forgejo review-state table: APPROVED,
// REQUEST_CHANGES, COMMENT and DISMISSED map to approved, changes_requested, commented and
// dismissed; PENDING and REQUEST_REVIEW rows are unsubmitted reviewer requests and are omitted.
//
// Forgejo records a dismissal as the boolean `dismissed: true` on the row and keeps the
// original state string (a dismissed approval still reads "APPROVED"), so a submitted row with
// dismissed: true maps to dismissed: the native disposition is dismissal, and reporting it as
// an approval would hand consumers an authority Forgejo withdrew. An unsubmitted row stays
// omitted whatever its dismissed flag says.
func mapReviewState(native string, dismissed bool) (string, reviewDisposition) {
	var state string
	switch native {
	case "APPROVED":
		state = "approved"
	case "REQUEST_CHANGES":
		state = "changes_requested"
	case "COMMENT":
		state = "commented"
	case "DISMISSED":
		return "dismissed", reviewKeep
	case "PENDING", "REQUEST_REVIEW":
		return "", reviewOmit
	default:
		return "", reviewInvalid
	}
	if dismissed {
		return "dismissed", reviewKeep
	}
	return state, reviewKeep
}

// checkRow is one row of the spec's Forgejo Actions status table.
type checkRow struct {
	status     string // queued, in_progress, completed
	conclusion string // only for completed
	// neverStartable: a completed row whose missing native started_at is the explicit
	// never-started report (cancelled, canceled, skipped).
	neverStartable bool
}

// forgejoCheckStatus is the spec's exhaustive Forgejo status table ("Adapters use these
// exhaustive v1 native-status mappings"). Any other native value is invalid_metadata.
var forgejoCheckStatus = map[string]checkRow{
	"pending":   {status: "queued"},
	"waiting":   {status: "queued"},
	"blocked":   {status: "queued"},
	"running":   {status: "in_progress"},
	"success":   {status: "completed", conclusion: "success"},
	"failure":   {status: "completed", conclusion: "failure"},
	"error":     {status: "completed", conclusion: "failure"},
	"warning":   {status: "completed", conclusion: "neutral"},
	"cancelled": {status: "completed", conclusion: "cancelled", neverStartable: true},
	"canceled":  {status: "completed", conclusion: "cancelled", neverStartable: true},
	"skipped":   {status: "completed", conclusion: "skipped", neverStartable: true},
}

// task is one row of GET /repos/{owner}/{repo}/actions/tasks (gitea.ActionTask's wire shape).
// The timestamps are decoded as raw strings, not time.Time, so that an absent or null
// run_started_at stays distinguishable from a real one.
type task struct {
	ID           int64   `json:"id"`
	Name         string  `json:"name"`
	HeadSHA      string  `json:"head_sha"`
	Status       string  `json:"status"`
	RunNumber    int64   `json:"run_number"`
	WorkflowID   string  `json:"workflow_id"`
	Event        string  `json:"event"`
	CreatedAt    *string `json:"created_at"`
	UpdatedAt    *string `json:"updated_at"`
	RunStartedAt *string `json:"run_started_at"`
}

// taskList is the body of GET /repos/{owner}/{repo}/actions/tasks (gitea.ActionTaskResponse).
type taskList struct {
	TotalCount int64  `json:"total_count"`
	Tasks      []task `json:"workflow_runs"`
}

// nativeTime returns the RFC 3339 form of a native timestamp, or "" when the forge reports
// none: an absent field, JSON null, an empty string, Go's zero time or the Unix epoch.
// Forgejo serialises an unset timeutil.TimeStamp (a task that never started) as the Unix
// epoch, so the epoch is the API's "null" for run_started_at; no Actions task really started
// at 1970-01-01T00:00:00Z. ok is false for a value that is present but not RFC 3339.
func nativeTime(p *string) (ts string, ok bool) {
	if p == nil || *p == "" {
		return "", true
	}
	t, err := time.Parse(time.RFC3339Nano, *p)
	if err != nil {
		return "", false
	}
	if t.IsZero() || t.Unix() == 0 {
		return "", true
	}
	return *p, true
}

// mapTask maps one Actions task for the captured head SHA into a v1 check. The second result
// is "" for a mapped check, or the gap code (invalid_metadata) that omits it.
func mapTask(t task, headSHA string) (acquisition.Check, string) {
	var c acquisition.Check
	if t.ID <= 0 {
		return c, acquisition.GapInvalidMetadata
	}
	row, known := forgejoCheckStatus[t.Status]
	if !known {
		return c, acquisition.GapInvalidMetadata
	}
	created, ok1 := nativeTime(t.CreatedAt)
	started, ok2 := nativeTime(t.RunStartedAt)
	updated, ok3 := nativeTime(t.UpdatedAt)
	if !ok1 || !ok2 || !ok3 || created == "" {
		return c, acquisition.GapInvalidMetadata
	}
	c = acquisition.Check{
		ID:        strconv.FormatInt(t.ID, 10),
		Name:      t.Name,
		Status:    row.status,
		CreatedAt: created,
		HeadSHA:   headSHA,
	}
	switch row.status {
	case "queued":
		// Queued checks have no start, completion or conclusion; native values are dropped.
	case "in_progress":
		if started == "" {
			return acquisition.Check{}, acquisition.GapInvalidMetadata
		}
		c.StartedAt = started
	case "completed":
		c.Conclusion = row.conclusion
		never := false
		if started == "" {
			if !row.neverStartable {
				// An ordinary terminal state without a start is not a never-started report.
				return acquisition.Check{}, acquisition.GapInvalidMetadata
			}
			never = true
		}
		c.NeverStarted = &never
		if !never {
			c.StartedAt = started
		}
		// The tasks endpoint exposes no stopped time; a finished task's updated_at is written
		// when it reaches its terminal state, so it is the native terminal timestamp.
		c.CompletedAt = updated
		if c.CompletedAt == "" {
			if !never {
				return acquisition.Check{}, acquisition.GapInvalidMetadata
			}
			c.CompletedAt = created // the spec's canonical fallback for never-started checks
		}
	}
	// Gitea and Forgejo stamp a task's start before they insert its row, and the row's
	// created time is the insertion's (whole seconds, taken after the runner token is hashed):
	// a real task can read as started a second or more before it was created. The task
	// existed from its start, so its creation is its start then, and the check's times stay in
	// lifecycle order.
	if c.StartedAt != "" && timeBefore(c.StartedAt, c.CreatedAt) {
		c.CreatedAt = c.StartedAt
	}
	return c, ""
}

// timeBefore reports whether RFC 3339 time a is before b (both already parsed once by nativeTime).
func timeBefore(a, b string) bool {
	ta, e1 := time.Parse(time.RFC3339Nano, a)
	tb, e2 := time.Parse(time.RFC3339Nano, b)
	return e1 == nil && e2 == nil && ta.Before(tb)
}

// permissionRole maps the collaborator-permission endpoint's access mode into the v1 role
// vocabulary. Forgejo's access modes are none, read, write, admin and owner: owner and admin
// are admin; write, read and none map to themselves. Forgejo has no maintain or triage level.
func permissionRole(mode string) (string, bool) {
	switch mode {
	case "owner", "admin":
		return "admin", true
	case "write":
		return "write", true
	case "read":
		return "read", true
	case "none":
		return "none", true
	}
	return "", false
}

// actorRef turns a Forgejo user into a record's actor reference. Forgejo's pseudo-users have
// non-positive IDs (Ghost, -1, for a deleted account; the Actions user, -2, for the automatic
// workflow token): they carry no immutable account ID, so the reference is null/null rather
// than an adapter-invented substitute.
func actorRef(u *gitea.User) acquisition.ActorRef {
	if u == nil || u.ID <= 0 {
		return acquisition.ActorRef{}
	}
	id := strconv.FormatInt(u.ID, 10)
	ref := acquisition.ActorRef{ID: &id}
	if u.UserName != "" {
		login := u.UserName
		ref.Login = &login
	}
	return ref
}

// isGitOID reports whether s is a lowercase SHA-1 or SHA-256 Git object ID.
func isGitOID(s string) bool {
	return (len(s) == 40 || len(s) == 64) && canon.IsLowerHex(s)
}

// normOID lowercases a Git object ID and reports whether it is well formed.
func normOID(s string) (string, bool) {
	s = strings.ToLower(s)
	return s, isGitOID(s)
}

// timeString renders an SDK timestamp; the zero time (absent on the wire) is "".
func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

// timePtrString renders an optional SDK timestamp.
func timePtrString(t *time.Time) string {
	if t == nil {
		return ""
	}
	return timeString(*t)
}

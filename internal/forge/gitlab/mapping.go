package gitlab

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// The spec's GitLab structural ID mappings ("All structural IDs ..."): numeric global ids in
// base 10 without leading zeroes, and opaque discussion ids.
var (
	numericID    = regexp.MustCompile(`^[1-9][0-9]*$`)
	discussionID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)
	gitOID       = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
)

// idString renders a global GitLab id; ok is false for a missing (zero) or negative id.
func idString(id int64) (string, bool) {
	if id <= 0 {
		return "", false
	}
	s := strconv.FormatInt(id, 10)
	return s, numericID.MatchString(s)
}

// validDiscussionID reports whether s fits the GitLab discussion-id mapping.
func validDiscussionID(s string) bool { return discussionID.MatchString(s) }

// validSHA reports whether s is a lowercase SHA-1 or SHA-256 Git object id.
func validSHA(s string) bool { return gitOID.MatchString(s) }

// timestamp renders a forge timestamp as RFC 3339 (the assembler canonicalises it); ok is
// false when the forge sent none.
func timestamp(t *time.Time) (string, bool) {
	if t == nil || t.IsZero() {
		return "", false
	}
	return t.UTC().Format(time.RFC3339Nano), true
}

// issueState maps a GitLab issue state (spec, entity state mapping): opened → open,
// closed → closed; anything else is unrepresentable.
func issueState(native string) (string, error) {
	switch native {
	case "opened":
		return "open", nil
	case "closed":
		return "closed", nil
	}
	return "", fmt.Errorf("issue state %q: not in the v1 GitLab mapping (opened, closed)", native)
}

// mergeRequestState maps a GitLab merge-request state: opened and locked (GitLab's
// merge-in-progress lock) → open, closed → closed, merged → merged.
func mergeRequestState(native string) (string, error) {
	switch native {
	case "opened", "locked":
		return "open", nil
	case "closed":
		return "closed", nil
	case "merged":
		return "merged", nil
	}
	return "", fmt.Errorf("merge request state %q: not in the v1 GitLab mapping (opened, locked, closed, merged)", native)
}

// Role maps a GitLab access level (members API access_level) to the v1 role vocabulary.
// ok is false for a level outside the documented table, which is never guessed.
//
//	Owner 50 → admin, Maintainer 40 → maintain, Developer 30 → write, Reporter 20 → triage,
//	Planner 15 → read, Guest 10 → read, Minimal access 5 → none, No access 0 → none.
//
// Admin (60) is an instance-wide flag, not a project membership level; the members API does
// not report it and it is deliberately not mapped.
func Role(level gl.AccessLevelValue) (string, bool) {
	switch level {
	case gl.OwnerPermissions:
		return "admin", true
	case gl.MaintainerPermissions:
		return "maintain", true
	case gl.DeveloperPermissions:
		return "write", true
	case gl.ReporterPermissions:
		return "triage", true
	case gl.PlannerPermissions, gl.GuestPermissions:
		return "read", true
	case gl.MinimalAccessPermissions, gl.NoPermissions:
		return "none", true
	}
	return "", false
}

// jobStatus is one row of the spec's exhaustive GitLab job status table.
type jobStatus struct {
	status     string // queued, in_progress, completed
	conclusion string // for completed
}

var jobStatuses = map[string]jobStatus{
	"created":              {status: "queued"},
	"waiting_for_resource": {status: "queued"},
	"waiting_for_callback": {status: "queued"},
	"preparing":            {status: "queued"},
	"pending":              {status: "queued"},
	"scheduled":            {status: "queued"},
	"manual":               {status: "queued"},
	"running":              {status: "in_progress"},
	"canceling":            {status: "in_progress"},
	"success":              {status: "completed", conclusion: "success"},
	"failed":               {status: "completed", conclusion: "failure"},
	"canceled":             {status: "completed", conclusion: "cancelled"},
	"skipped":              {status: "completed", conclusion: "skipped"},
}

// checkError says why a job could not become a check: it is always invalid_metadata.
type checkError struct {
	JobID int64
	Rule  string
}

func (e *checkError) Error() string {
	return fmt.Sprintf("job %d: %s (invalid_metadata)", e.JobID, e.Rule)
}

// mapJob maps one pipeline job to a check for the captured head revision, or returns a
// *checkError (invalid_metadata) when the spec's table or timestamp rules cannot be met:
// unknown status, missing id or creation time, a revision other than headSHA, an in-progress
// job without started_at, a completed job without a terminal time, or a failed or successful
// job without started_at. For completed canceled and skipped jobs a null started_at is the
// explicit never-started report; their completed_at falls back to created_at when GitLab has
// no finished_at. Native timestamps the mapped status forbids are omitted.
func mapJob(j *gl.Job, pipelineSHA, headSHA string) (acquisition.Check, error) {
	id, ok := idString(j.ID)
	if !ok {
		return acquisition.Check{}, &checkError{JobID: j.ID, Rule: "id: missing or not a positive integer"}
	}
	bad := func(rule string) (acquisition.Check, error) {
		return acquisition.Check{}, &checkError{JobID: j.ID, Rule: rule}
	}
	st, ok := jobStatuses[j.Status]
	if !ok {
		return bad(fmt.Sprintf("status %q: not in the v1 GitLab job status table", j.Status))
	}
	rev := pipelineSHA
	if j.Pipeline.Sha != "" {
		rev = j.Pipeline.Sha
	}
	if j.Commit != nil && j.Commit.ID != "" {
		rev = j.Commit.ID
	}
	if !validSHA(rev) {
		return bad("revision: missing or not a lowercase Git object id")
	}
	if rev != headSHA {
		return bad("revision: not the head revision captured at collection start")
	}
	created, ok := timestamp(j.CreatedAt)
	if !ok {
		return bad("created_at: missing")
	}
	c := acquisition.Check{ID: id, Name: j.Name, Status: st.status, CreatedAt: created, HeadSHA: rev}
	started, hasStart := timestamp(j.StartedAt)
	finished, hasFinish := timestamp(j.FinishedAt)
	switch st.status {
	case "queued":
		// queued checks carry no start, completion or conclusion: native values are dropped
	case "in_progress":
		if !hasStart {
			return bad("started_at: required for in_progress")
		}
		c.StartedAt = started
	case "completed":
		c.Conclusion = st.conclusion
		never := false
		if !hasStart {
			if st.conclusion != "cancelled" && st.conclusion != "skipped" {
				return bad("started_at: missing for a " + j.Status + " job (only canceled and skipped jobs may never start)")
			}
			never = true
		}
		c.NeverStarted = &never
		if never {
			c.CompletedAt = created
			if hasFinish {
				c.CompletedAt = finished
			}
		} else {
			if !hasFinish {
				return bad("finished_at: required for a completed job that started")
			}
			c.StartedAt = started
			c.CompletedAt = finished
		}
	}
	return c, nil
}

// Location is a DiffNote position mapped to the v1 path/line/side fields.
type Location struct {
	Path      string
	Line      int
	Side      string // left or right
	StartLine int
}

// mapPosition maps a DiffNote position: a new_line is a line on the right (new) side of the
// diff at new_path; a position with only an old_line is on the left (old) side at old_path
// (a removed line). A multi-line range contributes its start line on the same side when it
// precedes the end line. File and image positions carry a path only.
func mapPosition(p *gl.NotePosition) (Location, bool) {
	if p == nil {
		return Location{}, false
	}
	var loc Location
	switch {
	case p.NewLine > 0:
		loc = Location{Path: firstNonEmpty(p.NewPath, p.OldPath), Line: int(p.NewLine), Side: "right"}
	case p.OldLine > 0:
		loc = Location{Path: firstNonEmpty(p.OldPath, p.NewPath), Line: int(p.OldLine), Side: "left"}
	default:
		loc = Location{Path: firstNonEmpty(p.NewPath, p.OldPath)}
	}
	if loc.Path == "" {
		return Location{}, false
	}
	if loc.Line > 0 && p.LineRange != nil && p.LineRange.StartRange != nil {
		start := p.LineRange.StartRange.NewLine
		if loc.Side == "left" {
			start = p.LineRange.StartRange.OldLine
		}
		if start > 0 && int(start) < loc.Line {
			loc.StartLine = int(start)
		}
	}
	return loc, true
}

func firstNonEmpty(a ...string) string {
	for _, s := range a {
		if s != "" {
			return s
		}
	}
	return ""
}

package gitlab

import (
	"strconv"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Listing names (keys of listings).
const (
	listMRDiscussions    = "mr_discussions"
	listIssueDiscussions = "issue_discussions"
	listReceipts         = "receipts"
	listPipelines        = "pipelines"
	listJobs             = "jobs"
	listTraces           = "job_traces"
	listUsers            = "users"
	listMembers          = "members"
)

// listings is the adapter's dependency map, as data: every list it reads and the scopes an
// incomplete read of it shortens. Discussions hold the comment notes, the threads and the
// receipt notes (agent_runs); a pipeline's jobs are the checks, and a job's trace its check
// log. docs/gitlab.md has the same table in prose.
var listings = forge.NewListings(
	forge.Listing{Name: listMRDiscussions, Endpoint: "/projects/{id}/merge_requests/{iid}/discussions", Paged: true,
		Scopes: []string{acquisition.ScopeComments}, Feeds: []string{listReceipts}},
	forge.Listing{Name: listIssueDiscussions, Endpoint: "/projects/{id}/issues/{iid}/discussions", Paged: true,
		Scopes: []string{acquisition.ScopeComments}, Feeds: []string{listReceipts}},
	forge.Listing{Name: listReceipts, Scopes: []string{acquisition.ScopeAgentRuns}},
	forge.Listing{Name: listPipelines, Endpoint: "/projects/{id}/pipelines", Paged: true,
		Scopes: []string{acquisition.ScopeChecks}, Feeds: []string{listJobs}},
	forge.Listing{Name: listJobs, Endpoint: "/projects/{id}/pipelines/{pipeline_id}/jobs", Paged: true,
		Scopes: []string{acquisition.ScopeChecks}, Feeds: []string{listTraces}},
	forge.Listing{Name: listTraces, Endpoint: "/projects/{id}/jobs/{job_id}/trace", Scopes: []string{acquisition.ScopeCheckLogs}},
	forge.Listing{Name: listUsers, Endpoint: "/users/{user_id}", Scopes: []string{acquisition.ScopeActors}},
	forge.Listing{Name: listMembers, Endpoint: "/projects/{id}/members/all/{user_id}", Scopes: []string{acquisition.ScopeActors}},
)

// shortfall records that listing name ended incomplete: every scope it shortens that
// selected admits gets the gap (listings, the dependency map).
func (c *Client) shortfall(a *acquisition.Acquisition, name string, err error, lost int, selected func(string) bool) {
	listings.Shortfall(&a.Outcomes, name, fetchGap(err), lost, selected)
	c.opts.Log.Warn().Str("forge", "gitlab").Str("listing", name).Str("code", fetchGap(err)).
		Int("status", statusOf(err)).Int("lost", lost).Msg("gitlab listing incomplete")
}

// Drift-check keys: a row's ID and creation time.
func discussionKey(d *gl.Discussion) (string, time.Time) {
	if d == nil {
		return "", time.Time{}
	}
	var created time.Time
	for _, n := range d.Notes {
		if n != nil && n.CreatedAt != nil && (created.IsZero() || n.CreatedAt.Before(created)) {
			created = *n.CreatedAt
		}
	}
	return d.ID, created
}

func pipelineKey(p *gl.PipelineInfo) (string, time.Time) {
	if p == nil {
		return "", time.Time{}
	}
	return idKey(p.ID), timeOf(p.CreatedAt)
}

func jobKey(j *gl.Job) (string, time.Time) {
	if j == nil {
		return "", time.Time{}
	}
	return idKey(j.ID), timeOf(j.CreatedAt)
}

func idKey(id int64) string {
	if id <= 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

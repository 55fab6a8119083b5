package github

import (
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Listing names (the --stats keys of the paged listings).
const (
	listLabels         = "entity"
	listComments       = "comments"
	listReceipts       = "receipts"
	listReviews        = "reviews"
	listDismissals     = "review_dismissals"
	listDismissers     = "dismissal_actors"
	listThreads        = "review_threads"
	listThreadComments = "review_thread_comments"
	listCheckRuns      = "check_runs"
	listWorkflowRuns   = "workflow_runs"
	listWorkflowJobs   = "workflow_jobs"
	listJobLogs        = "job_logs"
)

// Request labels (--stats requests_by_endpoint) of the REST listings.
const (
	endpointComments  = "GET /repos/{owner}/{repo}/issues/{number}/comments"
	endpointReviews   = "GET /repos/{owner}/{repo}/pulls/{number}/reviews"
	endpointCheckRuns = "GET /repos/{owner}/{repo}/commits/{ref}/check-runs"
	endpointRuns      = "GET /repos/{owner}/{repo}/actions/runs"
	endpointJobs      = "GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs"
)

// listings is the adapter's dependency map, as data (forge.Listings): every listing it reads,
// the scopes its rows feed and the listings read for its rows. When a listing ends
// incomplete — a page failed past its retries, the provider's total was not reached, a
// declared next page was not followed, the page bound was hit, the pages shifted — every
// scope it shortens (its own and, transitively, its children's) that the run serves gets a
// fetch_failed gap (incomplete), never a silently shorter list. Check runs feed checks and,
// through each failed check, its log; the Actions workflow runs and their jobs feed every
// Actions check's created_at (a check without one is omitted) and so its log too; the
// review-dismissal timeline feeds the dismissal actor and time of dismissed reviews and the
// actor state of the dismissers; comments feed the comment records and the receipts read
// from them (agent_runs); review threads and their comment pages feed the review
// relationships and the review-thread comment records. A REST listing's drift check
// (driftCheck, POST /graphql Exists) belongs to the listing it checks. The labels listing
// (GraphQL Entity) feeds no optional scope: an incomplete label list aborts the acquisition.
// Endpoints are path templates below the API base; a GraphQL listing's is "/graphql" and its
// operation name. docs/github.md renders this table.
var listings = forge.NewListings(
	forge.Listing{Name: listLabels, Endpoint: "/graphql Entity", Paged: true},
	forge.Listing{Name: listComments, Endpoint: "/repos/{owner}/{repo}/issues/{number}/comments", Paged: true,
		Scopes: []string{acquisition.ScopeComments}, Feeds: []string{listReceipts}},
	forge.Listing{Name: listReceipts, Scopes: []string{acquisition.ScopeAgentRuns}},
	forge.Listing{Name: listReviews, Endpoint: "/repos/{owner}/{repo}/pulls/{number}/reviews", Paged: true,
		Scopes: []string{acquisition.ScopeReviews}},
	forge.Listing{Name: listDismissals, Endpoint: "/graphql Dismissals", Paged: true,
		Scopes: []string{acquisition.ScopeReviews}, Feeds: []string{listDismissers}},
	forge.Listing{Name: listDismissers, Scopes: []string{acquisition.ScopeActors}},
	forge.Listing{Name: listThreads, Endpoint: "/graphql Threads", Paged: true,
		Scopes: []string{acquisition.ScopeReviews, acquisition.ScopeComments}, Feeds: []string{listThreadComments}},
	forge.Listing{Name: listThreadComments, Endpoint: "/graphql ThreadComments", Paged: true,
		Scopes: []string{acquisition.ScopeReviews, acquisition.ScopeComments}},
	forge.Listing{Name: listCheckRuns, Endpoint: "/repos/{owner}/{repo}/commits/{ref}/check-runs", Paged: true,
		Scopes: []string{acquisition.ScopeChecks}, Feeds: []string{listJobLogs}},
	forge.Listing{Name: listWorkflowRuns, Endpoint: "/repos/{owner}/{repo}/actions/runs", Paged: true,
		Scopes: []string{acquisition.ScopeChecks}, Feeds: []string{listWorkflowJobs}},
	forge.Listing{Name: listWorkflowJobs, Endpoint: "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs", Paged: true,
		Scopes: []string{acquisition.ScopeChecks}, Feeds: []string{listJobLogs}},
	forge.Listing{Name: listJobLogs, Endpoint: "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs", Scopes: []string{acquisition.ScopeCheckLogs}},
)

// loss is what an incomplete listing lost, per fed scope: a count where one is known (0 means
// known to be none), no entry where it is not (the gap then counts 1, the least it can be).
type loss map[string]int

// shortfall is one incomplete listing's losses, recorded by its reader and turned into gaps by
// merge through the dependency map.
type shortfall struct {
	listing string
	lost    loss
}

// incomplete records that listing ended incomplete and what it lost. Safe for concurrent
// readers; merge applies the records in a fixed order.
func (r *run) incomplete(listing string, lost loss) {
	r.mu.Lock()
	r.short = append(r.short, shortfall{listing: listing, lost: lost})
	r.mu.Unlock()
}

// applyShortfalls adds, for every incomplete listing, a fetch_failed gap on each scope it
// shortens (listings.Shortens) that the acquisition serves, counted by the reader's loss
// (1 where it was not known). Gap counts add up per scope and code, so the order of the
// records does not change the outcome.
func (r *run) applyShortfalls(serves func(scope string) bool) {
	for _, s := range r.short {
		for _, scope := range listings.Shortens(s.listing) {
			if !serves(scope) {
				continue
			}
			n, known := s.lost[scope]
			if !known {
				n = 1
			}
			r.acq.Outcomes.Add(scope, acquisition.GapFetchFailed, n)
		}
	}
}

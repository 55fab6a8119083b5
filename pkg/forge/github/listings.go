package github

import (
	"sort"

	"github.com/forgectx/forgectx/pkg/acquisition"
)

// Listing is one paginated listing the adapter reads and the scopes its rows feed, directly or
// through the listings and lookups they drive. It is the adapter's dependency map: when a
// listing ends incomplete — a page failed past its retries, the provider's total was not
// reached, a declared next page was not followed, the page bound was hit, the pages shifted —
// every scope it feeds that the profile selects gets a fetch_failed gap (incomplete), never a
// silently shorter list. docs/github.md renders this table.
type Listing struct {
	// Name is the listing's key in --stats pages and lower_bound_parts.
	Name string
	// Endpoint is its templated label in --stats requests_by_endpoint.
	Endpoint string
	// Feeds are the scopes the listing's rows feed, in the order its rows reach them.
	Feeds []string
	// Aborts says an incomplete listing aborts the acquisition (the entity's labels are a
	// required singleton's metadata) instead of gapping.
	Aborts bool
}

// Listing names (the --stats keys).
const (
	listLabels          = "entity"
	listComments        = "comments"
	listReviews         = "reviews"
	listDismissals      = "review_dismissals"
	listThreads         = "review_threads"
	listThreadComments  = "review_thread_comments"
	listCheckRuns       = "check_runs"
	listWorkflowRuns    = "workflow_runs"
	listWorkflowJobs    = "workflow_jobs"
	endpointComments    = "GET /repos/{owner}/{repo}/issues/{number}/comments"
	endpointReviews     = "GET /repos/{owner}/{repo}/pulls/{number}/reviews"
	endpointCheckRuns   = "GET /repos/{owner}/{repo}/commits/{ref}/check-runs"
	endpointRuns        = "GET /repos/{owner}/{repo}/actions/runs"
	endpointJobs        = "GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs"
	endpointGraphQLPref = "POST /graphql "
)

// listings is the dependency map. Check runs feed checks and, through each failed check, its
// log; the Actions workflow runs and their jobs feed every Actions check's created_at (a check
// without one is omitted) and so its log too; the review-dismissal timeline feeds the dismissal
// actor and time of dismissed reviews and the actor state of the dismissers; comments feed the
// comment records and the receipts read from them (agent_runs); review threads and their
// comment pages feed the review relationships and the review-thread comment records. A REST
// listing's drift check (driftCheck, POST /graphql Exists) belongs to the listing it checks:
// a check that cannot be made leaves that listing unproven, so incomplete.
var listings = []Listing{
	{Name: listLabels, Endpoint: endpointGraphQLPref + "Entity", Feeds: []string{acquisition.ScopeEntity}, Aborts: true},
	{Name: listComments, Endpoint: endpointComments, Feeds: []string{acquisition.ScopeComments, acquisition.ScopeAgentRuns}},
	{Name: listReviews, Endpoint: endpointReviews, Feeds: []string{acquisition.ScopeReviews}},
	{Name: listDismissals, Endpoint: endpointGraphQLPref + "Dismissals", Feeds: []string{acquisition.ScopeReviews, acquisition.ScopeActors}},
	{Name: listThreads, Endpoint: endpointGraphQLPref + "Threads", Feeds: []string{acquisition.ScopeReviews, acquisition.ScopeComments}},
	{Name: listThreadComments, Endpoint: endpointGraphQLPref + "ThreadComments", Feeds: []string{acquisition.ScopeReviews, acquisition.ScopeComments}},
	{Name: listCheckRuns, Endpoint: endpointCheckRuns, Feeds: []string{acquisition.ScopeChecks, acquisition.ScopeCheckLogs}},
	{Name: listWorkflowRuns, Endpoint: endpointRuns, Feeds: []string{acquisition.ScopeChecks, acquisition.ScopeCheckLogs}},
	{Name: listWorkflowJobs, Endpoint: endpointJobs, Feeds: []string{acquisition.ScopeChecks, acquisition.ScopeCheckLogs}},
}

// Listings returns the dependency map (a copy): every listing the adapter reads, the scopes
// it feeds. The fault-matrix test iterates it, so a listing added here is a listing tested.
func Listings() []Listing {
	out := make([]Listing, len(listings))
	for i, l := range listings {
		out[i] = l
		out[i].Feeds = append([]string(nil), l.Feeds...)
	}
	return out
}

func listingByName(name string) Listing {
	for _, l := range listings {
		if l.Name == name {
			return l
		}
	}
	panic("github: unknown listing " + name) // a programming error: every caller names a const
}

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
// feeds that the acquisition serves. Records are applied in listing-table order, then by
// insertion (readers of one listing record sums, so the order does not change the counts).
func (r *run) applyShortfalls(serves func(scope string) bool) {
	order := map[string]int{}
	for i, l := range listings {
		order[l.Name] = i
	}
	sort.SliceStable(r.short, func(i, j int) bool { return order[r.short[i].listing] < order[r.short[j].listing] })
	for _, s := range r.short {
		for _, scope := range listingByName(s.listing).Feeds {
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
